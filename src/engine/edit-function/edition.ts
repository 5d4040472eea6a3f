/**
 * Edition by function as the engine uses it: compile once (syntax errors are the route's 400
 * `bad_request`), then edit documents one by one with the reference's errors
 * (`edit_documents_by_function_error`): the result must stay an object with the same primary key.
 */
import { SearchError } from '../errors.js';
import { documentId } from '../index/documents.js';
import type { Document } from '../types.js';
import { EditFunctionSyntaxError, parseEditFunction, type Stmt } from './parse.js';
import { EditFunctionRuntimeError, runEditFunction } from './run.js';

export type CompiledEdition = Stmt[];

export function compileEditFunction(source: string): CompiledEdition {
  try {
    return parseEditFunction(source);
  } catch (error) {
    if (error instanceof EditFunctionSyntaxError) throw new SearchError('bad_request', error.message);
    throw error;
  }
}

const editionError = (message: string): SearchError => new SearchError('edit_documents_by_function_error', message);

/** The edited document, `null` to delete it; throws when the function fails or breaks the rules. */
export function editDocument(
  program: CompiledEdition,
  document: Document,
  context: Record<string, unknown> | null,
  primaryKey: string | null,
): Document | null {
  let result: unknown;
  try {
    result = runEditFunction(program, document, context).document;
  } catch (error) {
    if (error instanceof EditFunctionRuntimeError) throw editionError(`Document edition runtime error encountered while running the function: ${error.message}.`);
    throw error;
  }
  if (result === null) return null;
  if (typeof result !== 'object' || Array.isArray(result)) throw editionError('Document editions must keep documents as objects');
  const edited = result as Document;
  if (primaryKey !== null && safeId(edited, primaryKey) !== documentId(document, primaryKey)) {
    throw editionError("Document editions cannot modify a document's primary key");
  }
  return edited;
}

function safeId(document: Document, primaryKey: string): string | null {
  try {
    return documentId(document, primaryKey);
  } catch {
    return null;
  }
}

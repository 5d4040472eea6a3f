/** Index uid rules as the reference states them, checked where a uid enters through HTTP. */
import { SearchError } from '../engine/errors.js';

const INDEX_UID = /^[A-Za-z0-9_-]{1,400}$/;

export function isValidIndexUid(uid: string): boolean {
  return INDEX_UID.test(uid);
}

export function indexUidReason(uid: string): string {
  return (
    `\`${uid}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric ` +
    'characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.'
  );
}

/** A uid taken from the URL path. */
export function checkPathIndexUid(uid: string): string {
  if (!isValidIndexUid(uid)) throw new SearchError('invalid_index_uid', indexUidReason(uid));
  return uid;
}

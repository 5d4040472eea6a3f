/** The document view: the stored document, fetched by its id, shown whole in a dialog. */
import type { Api } from './api.js';

function element<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

export function installDocumentView(): void {
  const dialog = element<HTMLDialogElement>('document-view');
  element('document-close').addEventListener('click', () => dialog.close());
  // a click on the backdrop (outside the dialog's box) closes it
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) dialog.close();
  });
}

export async function openDocument(api: Api, indexUid: string, id: string): Promise<void> {
  const dialog = element<HTMLDialogElement>('document-view');
  element('document-title').textContent = `${indexUid} / ${id}`;
  const pre = element('document-json');
  pre.textContent = 'Loading…';
  if (!dialog.open) dialog.showModal();
  try {
    pre.textContent = JSON.stringify(await api.getDocument(indexUid, id), null, 2);
  } catch (error) {
    pre.textContent = (error as Error).message;
  }
}

/**
 * The search preview page served by `search serve` at `/`: pick an index, search it as you type.
 * It talks to the server it was loaded from, with the API key saved in local storage (asked for
 * when the server refuses the request).
 */
import './style.css';
import { Api, ApiError, type IndexSummary } from './api.js';
import { storedApiKey, storeApiKey } from './api-key.js';
import { installDocumentView } from './document-view.js';
import { mountSearchUi, type SearchUi } from './search-ui.js';

function element<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

function showMessage(message: string | null): void {
  const box = element('message');
  box.hidden = message === null;
  box.textContent = message ?? '';
}

function askForKey(reason: string): void {
  element('app').hidden = true;
  element('key-prompt').hidden = false;
  element('key-prompt-reason').textContent = reason;
  const input = element<HTMLInputElement>('key-input');
  input.value = storedApiKey() ?? '';
  input.focus();
}

let current: SearchUi | null = null;

async function openIndex(api: Api, uid: string): Promise<void> {
  current?.dispose();
  current = null;
  history.replaceState(null, '', `#${encodeURIComponent(uid)}`);
  try {
    const [index, settings] = await Promise.all([api.getIndex(uid), api.getSettings(uid)]);
    current = mountSearchUi(api, storedApiKey(), index, settings, showMessage);
    showMessage(null);
  } catch (error) {
    if (error instanceof ApiError && error.isAuth) return askForKey(`${error.message} The key needs the search, documents.get and settings.get actions on \`${uid}\`.`);
    showMessage((error as Error).message);
  }
}

async function start(): Promise<void> {
  // the API is where the page was loaded from, path prefix included (behind a reverse proxy)
  const api = new Api(new URL('.', window.location.href).href.replace(/\/$/, ''), storedApiKey());
  let indexes: IndexSummary[];
  try {
    indexes = await api.listIndexes();
  } catch (error) {
    if (error instanceof ApiError && error.isAuth) return askForKey(error.message);
    return showMessage(`Cannot reach the server: ${(error as Error).message}`);
  }
  element('key-prompt').hidden = true;
  element('app').hidden = false;
  const picker = element<HTMLSelectElement>('index-picker');
  picker.replaceChildren(...indexes.map((index) => new Option(index.uid, index.uid)));
  if (indexes.length === 0) return showMessage('This database has no index yet: add documents, then reload.');
  const wanted = decodeURIComponent(window.location.hash.slice(1));
  picker.value = indexes.some((index) => index.uid === wanted) ? wanted : indexes[0]!.uid;
  picker.onchange = () => void openIndex(api, picker.value);
  await openIndex(api, picker.value);
}

function installKeyPrompt(): void {
  element('key-prompt').addEventListener('submit', (event) => {
    event.preventDefault();
    storeApiKey(element<HTMLInputElement>('key-input').value.trim() || null);
    void start();
  });
  element('key-forget').addEventListener('click', () => {
    storeApiKey(null);
    element<HTMLInputElement>('key-input').value = '';
  });
  element('change-key').addEventListener('click', () => askForKey('Search with another API key.'));
}

installKeyPrompt();
installDocumentView();
void start();

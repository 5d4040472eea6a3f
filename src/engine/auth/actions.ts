/**
 * API key actions: the names a key lists in `actions`, and what each one grants.
 *
 * A key stores the actions as written (so `GET /keys` shows them back unchanged); authorization
 * works on the expanded set: `*` grants every concrete action, `*.get` grants every read action,
 * `family.*` grants every action of that family. The list follows the public reference.
 */

/** Every action a key may list, in the reference's order (error messages enumerate them). */
export const ACTIONS = [
  '*',
  'search',
  'documents.*',
  'documents.add',
  'documents.get',
  'documents.delete',
  'indexes.*',
  'indexes.create',
  'indexes.get',
  'indexes.update',
  'indexes.delete',
  'indexes.swap',
  'indexes.compact',
  'fields.*',
  'fields.post',
  'tasks.*',
  'tasks.cancel',
  'tasks.delete',
  'tasks.get',
  'tasks.compact',
  'settings.*',
  'settings.get',
  'settings.update',
  'stats.*',
  'stats.get',
  'metrics.*',
  'metrics.get',
  'dumps.*',
  'dumps.create',
  'snapshots.*',
  'snapshots.create',
  'version',
  'keys.create',
  'keys.get',
  'keys.update',
  'keys.delete',
  'experimental.get',
  'experimental.update',
  'export',
  'network.get',
  'network.update',
  'chatCompletions',
  'chats.*',
  'chats.get',
  'chats.delete',
  'chatsSettings.*',
  'chatsSettings.get',
  'chatsSettings.update',
  '*.get',
  'webhooks.get',
  'webhooks.update',
  'webhooks.delete',
  'webhooks.create',
  'webhooks.*',
  'dynamicSearchRules.*',
  'dynamicSearchRules.get',
  'dynamicSearchRules.update',
  'dynamicSearchRules.delete',
] as const;

export type Action = (typeof ACTIONS)[number];

const ACTION_SET: ReadonlySet<string> = new Set(ACTIONS);

export function isAction(value: string): value is Action {
  return ACTION_SET.has(value);
}

/** Actions that expand to others rather than naming one route family member. */
function isWildcard(action: Action): boolean {
  return action === '*' || action.endsWith('.*') || action === '*.get';
}

/**
 * Read-only actions granted by `*.get`. `keys.get` is deliberately absent (reading keys would
 * reveal every key value: privilege escalation), as is `chatCompletions` (it may create chats).
 */
const READ_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  'search',
  'documents.get',
  'export',
  'indexes.get',
  'tasks.get',
  'settings.get',
  'stats.get',
  'metrics.get',
  'version',
  'experimental.get',
  'network.get',
  'chats.get',
  'chatsSettings.get',
  'webhooks.get',
  'dynamicSearchRules.get',
]);

export function isReadAction(action: Action): boolean {
  return READ_ACTIONS.has(action);
}

const CONCRETE: readonly Action[] = ACTIONS.filter((a) => !isWildcard(a));

/** The concrete actions one listed action grants. */
export function expandAction(action: Action): Action[] {
  if (action === '*') return [...CONCRETE];
  if (action === '*.get') return CONCRETE.filter(isReadAction);
  if (action.endsWith('.*')) {
    const family = action.slice(0, -1); // keeps the dot: `documents.`
    return CONCRETE.filter((a) => a.startsWith(family));
  }
  return [action];
}

/** The concrete actions a list grants, as a set for constant-time checks. */
export function expandActions(actions: readonly Action[]): Set<Action> {
  const out = new Set<Action>();
  for (const action of actions) for (const a of expandAction(action)) out.add(a);
  return out;
}

/** Actions that manage keys: never open without a master key, since keys derive from it. */
export function isKeysAction(action: Action): boolean {
  return action.startsWith('keys.');
}

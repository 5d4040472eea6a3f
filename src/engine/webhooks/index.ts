/** Task webhooks: the store behind `/webhooks` and the background notifier. */
import type { EventEmitter } from 'node:events';
import type { Task } from '../types.js';
import type { WebhookNotifier } from './notifier.js';

export { toNdjson, WebhookNotifier, type NotifierOptions } from './notifier.js';
export {
  INSTANCE_WEBHOOK_UUID,
  MAX_WEBHOOKS,
  WebhookStore,
  type InstanceWebhook,
  type WebhookTarget,
  type WebhookView,
} from './webhook-store.js';

/**
 * Send every finished batch to the webhooks: listens to the scheduler's `batchFinished` event
 * (emitted once the batch's task states are committed). Returns the function that disconnects.
 */
export function notifyOnBatchFinished(scheduler: EventEmitter, notifier: WebhookNotifier): () => void {
  const listener = (event: { tasks: Task[] }) => notifier.notify(event.tasks);
  scheduler.on('batchFinished', listener);
  return () => scheduler.off('batchFinished', listener);
}

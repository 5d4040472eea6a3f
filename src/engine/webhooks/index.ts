/** Task webhooks: the store behind `/webhooks` and the background notifier. */
import type { EventEmitter } from 'node:events';
import type { WebhookNotifier } from './notifier.js';

export { DEFAULT_DELIVERY, deliveryLimitsFromEnv, toNdjson, WebhookNotifier, type DeliveryLimits, type NotifierOptions } from './notifier.js';
export { WebhookOutbox, type Notification } from './outbox.js';
export {
  INSTANCE_WEBHOOK_UUID,
  MAX_WEBHOOKS,
  WebhookStore,
  type InstanceWebhook,
  type WebhookTarget,
  type WebhookView,
} from './webhook-store.js';

/**
 * Deliver what each finished batch put in the outbox: listens to the scheduler's `batchFinished`
 * event (emitted once the batch's results and notification are committed), and looks at the
 * outbox once at once for what an earlier run left. Returns the function that disconnects.
 */
export function notifyOnBatchFinished(scheduler: EventEmitter, notifier: WebhookNotifier): () => void {
  const listener = () => notifier.kick();
  notifier.kick();
  scheduler.on('batchFinished', listener);
  return () => scheduler.off('batchFinished', listener);
}

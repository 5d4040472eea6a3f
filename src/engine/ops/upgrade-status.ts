/**
 * The status of an instance during `search upgrade`, told the way a hosted console shows it:
 * `running -> updating -> running` when the upgrade succeeds, `running -> updating -> rolled back`
 * when it failed and was undone (`failed` when even that could not be verified). The command
 * prints each change on stderr, lists them in its `--json` report, and confirms the end with a
 * POST to `--notify-url`, which goes out under the same address rules as webhooks (public
 * addresses only unless `--experimental-allowed-ip-networks` allows more).
 */
import { AddressPolicy, outboundRequest } from '../net/index.js';

export type InstanceStatus = 'running' | 'updating' | 'rolled back' | 'failed';

export class StatusTrail {
  readonly history: InstanceStatus[] = [];

  constructor(private readonly onChange: (status: InstanceStatus, previous: InstanceStatus | null) => void = () => {}) {}

  get current(): InstanceStatus | null {
    return this.history[this.history.length - 1] ?? null;
  }

  set(status: InstanceStatus): void {
    const previous = this.current;
    if (previous === status) return;
    this.history.push(status);
    this.onChange(status, previous);
  }
}

export interface UpgradeNotice {
  event: 'upgrade';
  status: InstanceStatus;
  history: InstanceStatus[];
  from: string | null;
  to: string | null;
  taskUid: number | null;
  error: { code: string; message: string } | null;
  finishedAt: string;
}

export interface NoticeDelivery {
  url: string;
  delivered: boolean;
  httpStatus: number | null;
  error: string | null;
}

/** POST the notice as JSON; never throws (the upgrade's outcome stands whatever the receiver does). */
export async function sendNotice(url: string, notice: UpgradeNotice, options: { policy: AddressPolicy; authorization?: string; timeoutMs?: number }): Promise<NoticeDelivery> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'search-upgrade' };
  if (options.authorization) headers.authorization = options.authorization;
  try {
    const response = await outboundRequest(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(notice),
      policy: options.policy,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
    const delivered = response.status >= 200 && response.status < 300;
    return { url, delivered, httpStatus: response.status, error: delivered ? null : `the receiver answered ${response.status}` };
  } catch (error) {
    return { url, delivered: false, httpStatus: null, error: (error as Error).message };
  }
}

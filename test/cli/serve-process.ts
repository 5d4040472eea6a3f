/** Run the built `search` binary (bin/run.js) as operators do, and read its startup banner. */
import { execa, type ResultPromise } from 'execa';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));

export interface Served {
  process: ResultPromise;
  url: string;
  output: () => string;
}

const running = new Set<ResultPromise>();

/** SIGKILL every server still running (call after each test, so a failed assertion leaks none). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

/** Start `search serve` with the given flags and wait until the banner prints the address. */
export async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = execa('node', [BIN, 'serve', '--http-addr', '127.0.0.1:0', ...args], {
    env: { ...env },
    extendEnv: false,
    reject: false,
    all: true,
  });
  running.add(child);
  void child.finally(() => running.delete(child));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner after 90 s:\n${output}`)), 90_000);
    child.all!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening on: (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void child.then((result) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${result.exitCode} before listening:\n${output}`));
    });
  });
  return { process: child, url, output: () => output };
}

export async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export async function waitTask(base: string, uid: number, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await json(`${base}/tasks/${uid}`);
    if (['succeeded', 'failed', 'canceled'].includes(body.status)) return body;
    if (Date.now() > deadline) throw new Error(`task ${uid} still ${body.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

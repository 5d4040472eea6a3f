/**
 * Redaction of secrets shown back to users, as the reference does it: keep a short prefix so the
 * owner can recognise the secret, replace the rest. Used for embedder `apiKey` settings and for
 * webhook `Authorization` headers (where the `Bearer ` scheme is kept whole).
 */

/** Hide `secret` from byte `offset` on, keeping 0 to 5 more characters depending on its length. */
export function hideSecret(secret: string, offset = 0): string {
  const rest = secret.length - offset;
  if (rest < 0) return secret;
  if (rest < 10) return `${secret.slice(0, offset)}XXX...`;
  if (rest < 20) return `${secret.slice(0, offset + 2)}XXXX...`;
  if (rest < 30) return `${secret.slice(0, offset + 3)}XXXXX...`;
  return `${secret.slice(0, offset + 5)}XXXXXX...`;
}

/** Headers with every `Authorization` value (any case) redacted. */
export function redactAuthorizationHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'authorization') out[name] = value;
    else out[name] = value.startsWith('Bearer ') ? hideSecret(value, 'Bearer '.length) : hideSecret(value, 0);
  }
  return out;
}

/** Request headers safe to log: `Authorization` and cookies removed whatever their case. */
export function loggableHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    out[name] = lower === 'authorization' || lower === 'cookie' || lower === 'set-cookie' ? '[redacted]' : value;
  }
  return out;
}

/**
 * A request URL safe to log: the `/keys/:uidOrKey` segment may be a key value, so it is hidden,
 * as are query parameters that commonly carry credentials.
 */
export function loggableUrl(url: string): string {
  const [path = '', query] = url.split('?', 2);
  const safePath = path.replace(/^(\/keys\/)[^/]+/, '$1[redacted]');
  if (query === undefined) return safePath;
  const params = new URLSearchParams(query);
  for (const name of [...params.keys()])
    if (/key|token|secret|password|auth/i.test(name)) params.set(name, '[redacted]');
  return `${safePath}?${params.toString()}`;
}

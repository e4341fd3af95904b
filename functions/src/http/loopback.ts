/**
 * Who may use a server that answers this machine only: the console served
 * by `npm start` (INBOX_CONSOLE_ACCESS=local) and the proxy of `inbox
 * console`. Pure: a socket's address and a Host header in, a reason out.
 */

/** Host names that name this machine: a Host or Origin header with one of them was addressed to a loopback address. */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Whether a socket's remote address is this machine: 127.0.0.0/8, ::1, or either written as IPv4-mapped IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)) return true;
  return address === '::1' || address === '0:0:0:0:0:0:0:1';
}

/** The host name of a Host header (`name:port`, `[v6]:port`), lower-cased; null when it is no host. */
export function hostNameOf(host: string | undefined): string | null {
  if (host === undefined || host === '') return null;
  if (!URL.canParse(`http://${host}`)) return null;
  return new URL(`http://${host}`).hostname.toLowerCase();
}

/** Whether a Host header names this machine (a name of {@link LOOPBACK_NAMES}, any port). */
export function isLoopbackHost(host: string | undefined): boolean {
  const name = hostNameOf(host);
  return name !== null && LOOPBACK_NAMES.has(name);
}

/**
 * The rule of a server for this machine alone: only a loopback peer, and
 * only under a loopback name. The Host check stops DNS rebinding: a foreign
 * page whose name resolves to 127.0.0.1 reaches a loopback port from the
 * operator's own browser, but its requests carry its own name in Host.
 * `what` names the server in the reason. null: allowed; else why not.
 */
export function localRefusal(
  remoteAddress: string | undefined,
  host: string | undefined,
  what = 'the local console',
): string | null {
  if (!isLoopbackAddress(remoteAddress))
    return `${what} answers this machine only (peer ${remoteAddress ?? 'unknown'} is not a loopback address)`;
  if (!isLoopbackHost(host))
    return `${what} answers loopback names only (Host ${JSON.stringify(host ?? '')}): open http://127.0.0.1:PORT/`;
  return null;
}

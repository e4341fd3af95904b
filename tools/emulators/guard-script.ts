/**
 * Source of the guard process that watches each process group the harness
 * spawns. Run as `node -e GUARD_SCRIPT <pgid> <graceMs>`, detached (its own
 * session, so the Ctrl-C that kills the spawning process does not reach it).
 *
 * Why it exists: in-process cleanup ('exit'/SIGINT handlers) cannot cover
 * every way the spawning process goes away. It may be SIGKILLed, and inside
 * jest test files `process.on(...)` registers on jest's sandboxed copy of
 * `process`, so those handlers never fire at all. The guard holds the read
 * end of a pipe whose write end lives only in the spawning process; the OS
 * closes it however that process dies, and the guard then stops the group:
 * SIGTERM, SIGKILL after graceMs.
 *
 * It is not the group leader because gcloud insists on leading its own group
 * (it calls setpgid(0, 0) unless it is a session leader), so the guard sits
 * beside the group. It exits by itself as soon as the group is gone.
 */
export const GUARD_SCRIPT = String.raw`
'use strict';
const pgid = Number(process.argv[1]);
const graceMs = Number(process.argv[2]);
if (!Number.isInteger(pgid) || pgid <= 1) process.exit(2);
const alive = () => {
  try { process.kill(-pgid, 0); return true; } catch (e) { return e.code === 'EPERM'; }
};
const signalGroup = (sig) => { try { process.kill(-pgid, sig); } catch (e) { /* gone */ } };
setInterval(() => { if (!alive()) process.exit(0); }, 250);
let orphaned = false;
const onParentGone = () => {
  if (orphaned) return;
  orphaned = true;
  console.error('[guard] spawning process is gone; stopping process group ' + pgid);
  signalGroup('SIGTERM');
  setTimeout(() => { signalGroup('SIGKILL'); process.exit(0); }, graceMs);
};
process.stdin.on('end', onParentGone);
process.stdin.on('close', onParentGone);
process.stdin.on('error', onParentGone);
process.stdin.resume();
`;

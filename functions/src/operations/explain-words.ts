/** How times and process tokens read in `inbox explain` and the console's explanation. Pure. */
import type { ExplainFacts, InstanceFact, TokenFact } from './explain-model';

/** An ISO time with how far it is from now. */
export function when(at: Date, now: Date): string {
  const ms = at.getTime() - now.getTime();
  const abs = Math.abs(ms);
  const span =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 7_200_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 172_800_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return `${at.toISOString()} (${ms >= 0 ? `in ${span}` : `${span} ago`})`;
}

/** Where a token is and what it waits for. */
export function tokenText(t: TokenFact): string {
  if (t.status === 'WAITING_MESSAGE' && t.waitingFor !== null)
    return `token ${t.executionId} waits at ${t.activityId} for ${t.waitingFor.messageName} with key ${t.waitingFor.correlationKey}`;
  if (t.status === 'WAITING_JOB')
    return `token ${t.executionId} is at activity ${t.activityId}, waiting for job ${String(t.jobId)}`;
  if (t.status === 'WAITING_USER')
    return `token ${t.executionId} waits at user task ${t.activityId} for a person (inbox tasks show ${String(t.waitsOn)})`;
  if (t.status === 'WAITING_JOIN')
    return `token ${t.executionId} waits at join ${t.activityId} (arrived by ${String(t.waitsOn)}) for a token on each other incoming flow`;
  if (t.status === 'WAITING_ITEMS')
    return `token ${t.executionId} waits at multi-instance activity ${t.activityId} until its items have ended, each an instance of its own (inbox instances with the business key lists them)`;
  if (t.status === 'WAITING_CALL')
    return `token ${t.executionId} waits at call activity ${t.activityId} until the instance it called has no token left (inbox instance ${String(t.waitsOn)})`;
  if (t.status === 'WAITING_SCOPE')
    return `token ${t.executionId} waits at subprocess ${t.activityId} until no token is left inside it`;
  if (t.status === 'ACTIVE') return `token ${t.executionId} is stopped at activity ${t.activityId}`;
  return `token ${t.executionId} is ${t.status} at activity ${t.activityId}`;
}

/** The CLI as the explanations quote it. */
export const CLI = 'npx inbox';

/** The instances' state for a key nobody waits under: why no token waits, and what would repair it. */
export function whyNobodyWaits(f: ExplainFacts, now: Date): { because: string[]; repair: string[]; late: boolean } {
  const { messageName, correlationKey } = f.doc;
  if (f.instances.length === 0) {
    return {
      because: [
        `no process instance for key ${String(correlationKey)}: none waits for ${String(messageName)} with it and none has it as business key (the process was never started, or under another business key)`,
      ],
      repair: [
        `start the process for ${String(correlationKey)} (POST {processKey, businessKey, variables} to startProcess; the runbook's NO_WAITING_INSTANCE section)`,
      ],
      late: false,
    };
  }
  const because: string[] = [];
  const repair: string[] = [];
  let open = 0;
  for (const i of f.instances) {
    if (i.status === 'COMPLETED') {
      because.push(
        `instance ${i.id} (business key ${i.businessKey}) completed${i.completedAt === null ? '' : ` at ${when(i.completedAt, now)}`}: no token of it will wait again`,
      );
      continue;
    }
    open += 1;
    const incidents = i.openIncidents.length > 0 ? `, open incidents: ${i.openIncidents.join(', ')}` : '';
    const tokens = i.tokens.length === 0 ? 'no active token' : i.tokens.map((t) => tokenText(t)).join('; ');
    because.push(`instance ${i.id} (business key ${i.businessKey}) is ${i.status}${incidents}: ${tokens}`);
    if (i.status === 'INCIDENT' || i.tokens.some((t) => t.status === 'ACTIVE')) {
      repair.push(
        `repair instance ${i.id} first (${CLI} incidents; the runbook's process incidents / jobs failed sections), e.g. ${CLI} repair move-token --instance ${i.id} --activity WAIT_ACTIVITY`,
      );
    }
  }
  return { because, repair, late: open === 0 };
}

/** The version an instance runs on, in words; null when its document names none. */
export function versionText(i: InstanceFact): string | null {
  const v = i.version ?? null;
  if (v === null) return null;
  const deployed =
    v.deployedVersion === null
      ? 'its process is not deployed by this app'
      : v.deployedVersion === v.version
        ? 'the deployed one'
        : `not the deployed one (${v.deployedVersion.slice(0, 8)})`;
  const stored = v.stored
    ? 'stored'
    : `never stored: it runs on the deployed model (register its XML: ${CLI} versions --register FILE)`;
  return `instance ${i.id} runs process ${v.processKey} version ${v.version.slice(0, 8)}: ${deployed}, ${stored}`;
}

import { type BasisChangedError, describeFacts, type RepairBasis } from '../engine/repair-basis';

/**
 * A repair refused because what it acts on changed since its preview, in
 * words for the operator: "the token moved from Wait for the reply
 * (waitForReply) to Settle (settle) since the preview".
 * Pure: `label` names an activity (its BPMN name and id).
 */

const fact = (basis: RepairBasis, key: string): string => basis.facts[key] ?? '';

function tokenChange(then: RepairBasis, now: RepairBasis, label: (activityId: string) => string): string {
  const [from, to] = [fact(then, 'at'), fact(now, 'at')];
  const ended = fact(now, 'status') === 'ENDED' || fact(now, 'status') === 'CANCELLED';
  if (ended)
    return `the token ${fact(now, 'status') === 'ENDED' ? 'ended' : 'was cancelled'} at ${label(to)} since the preview (it was at ${label(from)})`;
  if (from !== to) return `the token moved from ${label(from)} to ${label(to)} since the preview`;
  if (fact(then, 'step') !== fact(now, 'step'))
    return `the token left ${label(to)} and came back since the preview (step ${fact(then, 'step')}, now ${fact(now, 'step')})`;
  return `the token at ${label(to)} is ${fact(now, 'status')} now, ${fact(then, 'status')} at the preview`;
}

/** The refusal's reason in words, with activities labelled; ends with what to do. */
export function basisChangeText(err: BasisChangedError, label: (activityId: string) => string): string {
  const { then, now } = err;
  let what: string;
  switch (then.subject) {
    case 'token':
      what =
        now.subject === 'token'
          ? tokenChange(then, now, label)
          : `the token changed since the preview (then ${describeFacts(then)}; now ${describeFacts(now)})`;
      break;
    case 'incidents':
      what = `the instance's incidents changed since the preview (then ${describeFacts(then)}; now ${describeFacts(now)})`;
      break;
    case 'tokens':
      what = `the instance's tokens changed since the preview (then ${describeFacts(then)}; now ${describeFacts(now)})`;
      break;
    case 'document':
      what = `the document is ${[fact(now, 'status'), fact(now, 'reason')].filter((s) => s !== '').join(' ')} now, ${[fact(then, 'status'), fact(then, 'reason')].filter((s) => s !== '').join(' ')} at the preview`;
      break;
    case 'version':
      what = `the stored version changed since the preview (then ${describeFacts(then)}; now ${describeFacts(now)})`;
      break;
  }
  return `refused: ${what}: nothing was done; preview again to see what the repair would do now`;
}

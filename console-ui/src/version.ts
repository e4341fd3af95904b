/**
 * A process version as the console shows it: the first 8 of its 16 hex
 * digits (the whole hash as the title), linked to the instances of that
 * version; and the link of an instance on another version than the
 * deployed one to the migration view.
 */
import type { InstanceView } from '../../functions/src/operations/types';
import { h } from './dom';
import { link } from './router';

/** The short form of a version hash. */
export const shortVersion = (version: string): string => version.slice(0, 8);

/** The version, short, as a link to the list of its process's instances of that version; "—" for none. */
export function versionLink(processKey: string, version: string | null, testid = 'version-link'): Node | string {
  if (version === null) return '—';
  return h(
    'a',
    { href: link.versionInstances({ process: processKey, version }), title: version, testid },
    h('code', {}, shortVersion(version)),
  );
}

/** "Migrate this instance…" for an instance (not a multi-instance item) on a stored version other than the deployed one; else null. */
export function migrateLink(v: InstanceView): HTMLElement | null {
  const { id, deployed, drawn } = v.version;
  if (id === null || id === deployed || drawn !== 'own' || v.row.processKey.includes('#')) return null;
  return h(
    'a',
    { href: link.migrate({ process: v.row.processKey, from: id, instance: v.row.id }), testid: 'migrate-instance' },
    'Migrate this instance…',
  );
}

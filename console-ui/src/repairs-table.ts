/** The repair records of a document or instance: who did what, when, and how. */
import type { RepairRecordView } from '../../functions/src/operations/types';
import { h, row, section, table, time } from './dom';

export function repairsSection(records: readonly RepairRecordView[]): HTMLElement {
  return section(
    'Repairs',
    'repairs',
    table(
      'repair-records',
      ['When', 'Who', 'Via', 'What', 'Details', 'Request'],
      records.map((r) =>
        row(
          'repair-record',
          [
            time(r.at),
            r.by ?? '(not recorded)',
            r.via ?? '—',
            r.kind,
            h('code', {}, JSON.stringify(r.details)),
            h('code', {}, r.requestId),
          ],
          { 'data-kind': r.kind },
        ),
      ),
      'No repairs.',
    ),
  );
}

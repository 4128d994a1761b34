/**
 * What `npm run import` (tools/import.ts) reads and says: its options, its progress line and its
 * summary of an import, apart from the requests it sends.
 */
import { extname } from 'node:path';
import { parseArgs } from 'node:util';
import type { Schemas } from '../../client/index';

const DEFAULT_URL = 'http://localhost:5005';

export const USAGE = `Usage: npm run import -- FILE [options]

Imports FILE, a feed of batches and counts in JSON Lines (.jsonl) or CSV (.csv), and shows its
progress until it ends (docs/api.md, "Imports").

Options:
  --url URL            the service (default ${DEFAULT_URL}, what npm start serves); an API Gateway
                       URL is signed with SigV4 and the AWS SDK's credentials, as the typed client does
  --dry-run            judge each row and write no stock
  --format FORMAT      jsonl or csv (default: by the file's extension)
  --importid ID        the import's id (default: the file's name and digest, so that the same file
                       sent again is the same import and changes nothing more)
  --no-validate-first  apply the rows that are good even when some are refused
  --results OUT        once it ends, write what each row did to OUT, a JSON Lines file of
                       {row, outcome, code?, message?} (GET /imports/{importid}/rows)
  --help               show this

Exit status: 0 when every row applied or was unchanged, 1 when any did not or the import failed,
2 for a wrong command or a service that could not be reached.
`;

export type Import = Schemas['Import'];

/** The command as given is not one: said with the usage. */
export class UsageError extends Error {}

export interface Options {
  readonly file: string;
  readonly url: string;
  readonly dryRun: boolean;
  readonly format: 'jsonl' | 'csv';
  readonly importid?: string;
  readonly validateFirst: boolean;
  /** Where to write what each row did, once the import ends. */
  readonly results?: string;
}

export const parseOptions = (args: readonly string[]): Options | 'help' => {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        'dry-run': { type: 'boolean' },
        format: { type: 'string' },
        importid: { type: 'string' },
        'no-validate-first': { type: 'boolean' },
        results: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'Name the feed file to import' : `One file at a time, not ${positionals.length}`);
  const file = positionals[0] as string;
  const format = values.format ?? { '.jsonl': 'jsonl', '.ndjson': 'jsonl', '.csv': 'csv' }[extname(file).toLowerCase()];
  if (format !== 'jsonl' && format !== 'csv') throw new UsageError(`Say the file's format with --format jsonl or --format csv: ${values.format === undefined ? 'its extension does not tell' : `not ${values.format}`}`);
  return { file, url: values.url ?? DEFAULT_URL, dryRun: values['dry-run'] ?? false, format, validateFirst: !(values['no-validate-first'] ?? false), ...(values.importid === undefined ? {} : { importid: values.importid }), ...(values.results === undefined ? {} : { results: values.results }) };
};

const duration = (seconds: number): string => {
  if (!Number.isFinite(seconds)) return '--:--';
  const whole = Math.max(0, Math.round(seconds));
  const [h, m, s] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  return `${h > 0 ? `${h}:${String(m).padStart(2, '0')}` : String(m)}:${String(s).padStart(2, '0')}`;
};

const BAR_WIDTH = 30;

/** One line of progress: the rows done of the total, the rate and the time left. */
export const progressLine = ({ status, counts }: Import, elapsedSeconds: number): string => {
  const { total, done } = counts;
  if (status === 'awaiting_upload') return 'waiting for the file to arrive';
  if (done === 0 && status === 'running') return `checking rows: ${total.toLocaleString('en')} so far`;
  const share = total === 0 ? 0 : done / total;
  const filled = Math.round(share * BAR_WIDTH);
  const rate = elapsedSeconds > 0 ? done / elapsedSeconds : 0;
  const left = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')} rows  ${Math.round(rate).toLocaleString('en')} rows/s  ${duration(left)} left`;
};

/** What the import did, for its last lines. */
export const summary = ({ importid, status, dry_run, counts, errors, file_refused }: Import): string[] => {
  const { total, done, applied, unchanged, conflicted, stale, invalid, failed } = counts;
  const lines = [
    `import ${importid}: ${status}${dry_run ? ' (dry run: no stock written)' : ''}`,
    `  ${done} of ${total} rows done: ${applied} applied, ${unchanged} unchanged, ${conflicted} conflicted, ${stale} stale, ${invalid} invalid, ${failed} failed`,
  ];
  if (file_refused) lines.push(`  the file was refused${file_refused.row === undefined ? '' : ` at row ${file_refused.row}`}: ${file_refused.message}`);
  for (const { row, outcome, code, message } of errors) lines.push(`  row ${row}: ${outcome} (${code}): ${message}`);
  return lines;
};

/** Whether every row of the import applied, or found stock as it says. */
export const allApplied = ({ status, counts }: Import): boolean => status === 'completed' && counts.applied + counts.unchanged === counts.total;


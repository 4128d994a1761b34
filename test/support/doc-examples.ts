import { readFileSync, readdirSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';

/*
 * The request examples of the README and the docs/ pages, as docs/development.md describes them: in
 * a ```sh block, a `curl` command (continued by a trailing `\` or `|`), then, on the next line, its
 * answer as a comment:
 *
 *   # <status> <body>              the body: JSON, over several lines each starting "#  " when long;
 *                                  a JSON string "<...>" stands for a generated value, any string;
 *   # <status> <body> (with Allow: GET, PATCH)    and a header the answer carries;
 *   # 204 No Content               an empty body (the status line's words);
 *   # 201 Created, body OK         the status line's words, then a body of text;
 *   # 201 OK                       any other text is the body as text.
 *
 * A command sent to the local server (`localhost:5005`) without an answer comment must succeed. Any
 * other request (awscurl, or curl to the deployed `${API_URL}`) needs AWS and is listed, not run.
 * A ```ts block that imports the typed client (`@allocation-service/client`) is an example too: a
 * program, type-checked and run against the local server when it calls `localhost:5005`.
 */

export const LOCAL_ORIGIN = 'localhost:5005';
export const CLIENT_PACKAGE = '@allocation-service/client';

export interface ExpectedAnswer {
  readonly status: number;
  readonly body: { readonly json: unknown } | { readonly text: string };
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface DocExample {
  /** The file, relative to the repository, and the line of the command in it. */
  readonly page: string;
  readonly line: number;
  /** A shell command, or a TypeScript program calling the typed client. */
  readonly language: 'sh' | 'ts';
  /** As written, continuation lines included. */
  readonly command: string;
  /** Sent to the local server; otherwise it needs a deployed stack. */
  readonly local: boolean;
  readonly expected?: ExpectedAnswer;
}

const ANSWER = /^# (\d{3})(?: (.*))?$/;
const ANSWER_CONTINUED = /^#\s{2,}(\S.*)$/;
const HEADER_NOTE = /^\(with ([A-Za-z-]+): (.+)\)$/;

/** The JSON value at the start of `text`, and what follows it. */
const leadingJson = (text: string): { json: unknown; rest: string } => {
  for (let end = text.length; end > 0; end--) {
    if (text[end - 1] !== '}' && text[end - 1] !== ']') continue;
    try {
      return { json: JSON.parse(text.slice(0, end)), rest: text.slice(end).trim() };
    } catch {
      // a shorter prefix may be the value, with a note after it
    }
  }
  throw new Error(`not JSON: ${text}`);
};

const parseAnswer = (status: number, shown: string, where: string): ExpectedAnswer => {
  if (status === 204 && shown === 'No Content') return { status, body: { text: '' }, headers: {} };
  const phrase = `${STATUS_CODES[status]}, body `;
  if (shown.startsWith(phrase)) return { status, body: { text: shown.slice(phrase.length) }, headers: {} };
  if (!shown.startsWith('{') && !shown.startsWith('[')) return { status, body: { text: shown }, headers: {} };
  const { json, rest } = leadingJson(shown);
  if (rest === '') return { status, body: { json }, headers: {} };
  const header = HEADER_NOTE.exec(rest);
  if (!header) throw new Error(`${where}: after the body, only "(with Name: value)" may follow, not ${rest}`);
  return { status, body: { json }, headers: { [(header[1] as string).toLowerCase()]: header[2] as string } };
};

/**
 * The examples of one Markdown text, in order: by default those that run, in ```sh blocks; with
 * `shownOnly`, the requests and answers written the same way in blocks of no language or another,
 * which show the form without running (docs/development.md's).
 */
export const examplesIn = (page: string, markdown: string, { shownOnly = false } = {}): DocExample[] => {
  const lines = markdown.split('\n');
  const examples: DocExample[] = [];
  let block: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.trimStart().startsWith('```')) {
      block = block === undefined ? line.trim().slice(3) : undefined;
      if (block === 'ts') {
        const end = lines.findIndex((closing, at) => at > index && closing.trimStart().startsWith('```'));
        const program = lines.slice(index + 1, end).join('\n');
        if (program.includes(`'${CLIENT_PACKAGE}'`)) {
          examples.push({ page, line: index + 2, language: 'ts', command: program, local: program.includes(LOCAL_ORIGIN) });
        }
      }
      continue;
    }
    const read = shownOnly ? block !== undefined && block !== 'sh' && block !== 'ts' : block === 'sh';
    if (!read || line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const start = index;
    const commandLines = [line];
    while (/[\\|]\s*$/.test(lines[index] as string) && index + 1 < lines.length) commandLines.push(lines[++index] as string);
    const command = commandLines.join('\n');
    if (!/curl\b/.test(command)) continue;
    const where = `${page}:${start + 1}`;
    let expected: ExpectedAnswer | undefined;
    const answer = ANSWER.exec(lines[index + 1] ?? '');
    if (answer) {
      index++;
      let shown = answer[2] ?? '';
      for (let next = ANSWER_CONTINUED.exec(lines[index + 1] ?? ''); next; next = ANSWER_CONTINUED.exec(lines[index + 1] ?? '')) {
        shown += next[1];
        index++;
      }
      expected = parseAnswer(Number(answer[1]), shown, where);
    }
    examples.push({ page, line: start + 1, language: 'sh', command, local: command.includes(LOCAL_ORIGIN), expected });
  }
  return examples;
};

/** The README first, then every page of docs/, by name. */
export const documentedPages = (root: string): string[] => [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

export const examplesOf = (root: string, page: string, options?: { shownOnly?: boolean }): DocExample[] =>
  examplesIn(page, readFileSync(join(root, page), 'utf8'), options);

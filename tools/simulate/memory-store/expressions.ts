import { Unsupported, validation } from './errors';
import type { ExpressionKind, Placeholders } from './placeholders';
import { RESERVED_WORDS } from './reserved-words';
import type { AttributeValue } from './values';

/*
 * DynamoDB's expression grammar, read into trees with their placeholders filled in: condition
 * expressions (which also give the key conditions of a Query) and update expressions. What
 * DynamoDB refuses with a message a caller could meet (a placeholder not defined, a reserved word)
 * is refused with its message; a syntax error is thrown as unsupported, since DynamoDB Local's
 * parser words those in ways not worth copying for calls the service never makes.
 */

export type PathElement = { readonly name: string } | { readonly index: number };
/** A document path: an attribute's name, then names of map entries and places in lists. */
export type Path = readonly [{ readonly name: string }, ...PathElement[]];

export type Operand =
  | { readonly kind: 'path'; readonly path: Path }
  | { readonly kind: 'value'; readonly value: AttributeValue }
  | { readonly kind: 'size'; readonly path: Path };

export type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type Condition =
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition }
  | { readonly kind: 'not'; readonly condition: Condition }
  | { readonly kind: 'compare'; readonly comparator: Comparator; readonly left: Operand; readonly right: Operand }
  | { readonly kind: 'between'; readonly operand: Operand; readonly low: Operand; readonly high: Operand }
  | { readonly kind: 'in'; readonly operand: Operand; readonly list: readonly Operand[] }
  | { readonly kind: 'attribute_exists' | 'attribute_not_exists'; readonly path: Path }
  | { readonly kind: 'begins_with' | 'contains'; readonly operand: Operand; readonly argument: Operand };

/** The value a SET action writes: an operand, a function of operands, or two of them added or subtracted. */
export type SetValue =
  | Operand
  | { readonly kind: 'if_not_exists'; readonly path: Path; readonly fallback: SetValue }
  | { readonly kind: 'list_append'; readonly first: SetValue; readonly second: SetValue }
  | { readonly kind: '+' | '-'; readonly left: SetValue; readonly right: SetValue };

export type UpdateAction =
  | { readonly kind: 'SET'; readonly path: Path; readonly value: SetValue }
  | { readonly kind: 'REMOVE'; readonly path: Path }
  | { readonly kind: 'ADD' | 'DELETE'; readonly path: Path; readonly value: AttributeValue };

type Token =
  | { readonly kind: 'word' | 'name' | 'value'; readonly text: string }
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'symbol'; readonly text: string }
  | { readonly kind: 'end'; readonly text: '' };

const TOKEN = /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|(<>|<=|>=|[=<>()[\],.+-]))/y;

const tokensOf = (expression: string): Token[] => {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expression.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expression);
    if (!match) {
      if (expression.slice(at).trim() === '') break;
      throw new Unsupported(`the expression '${expression}' (unreadable at ${at})`);
    }
    const [, name, value, word, number, symbol] = match;
    if (name !== undefined) tokens.push({ kind: 'name', text: name });
    else if (value !== undefined) tokens.push({ kind: 'value', text: value });
    else if (word !== undefined) tokens.push({ kind: 'word', text: word });
    else if (number !== undefined) tokens.push({ kind: 'number', text: number });
    else tokens.push({ kind: 'symbol', text: symbol as string });
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
};

const CONDITION_FUNCTIONS = new Set(['attribute_exists', 'attribute_not_exists', 'begins_with', 'contains']);
const COMPARATORS = new Set<string>(['=', '<>', '<', '<=', '>', '>=']);
const UPDATE_SECTIONS = new Set(['SET', 'REMOVE', 'ADD', 'DELETE']);

/** Reads one expression, token by token; each rule of the grammar is a method. */
class Reader {
  private readonly tokens: Token[];
  private at = 0;

  constructor(
    private readonly expression: string,
    private readonly kind: ExpressionKind,
    private readonly placeholders: Placeholders,
  ) {
    this.tokens = tokensOf(expression);
  }

  private get next(): Token {
    return this.tokens[this.at] as Token;
  }

  private peek(ahead: number): Token {
    return this.tokens[Math.min(this.at + ahead, this.tokens.length - 1)] as Token;
  }

  private take(): Token {
    const token = this.next;
    if (token.kind !== 'end') this.at++;
    return token;
  }

  private isWord(word: string): boolean {
    return this.next.kind === 'word' && this.next.text.toUpperCase() === word;
  }

  private isSymbol(symbol: string): boolean {
    return this.next.kind === 'symbol' && this.next.text === symbol;
  }

  private expect(symbol: string): void {
    if (!this.isSymbol(symbol)) this.fail(`'${symbol}'`);
    this.take();
  }

  private fail(expected: string): never {
    throw new Unsupported(`the expression '${this.expression}' (${expected} expected at '${this.next.text || 'its end'}')`);
  }

  end(): void {
    if (this.next.kind !== 'end') this.fail('the end');
  }

  condition(): Condition {
    let left = this.conjunction();
    while (this.isWord('OR')) {
      this.take();
      left = { kind: 'or', left, right: this.conjunction() };
    }
    return left;
  }

  private conjunction(): Condition {
    let left = this.negation();
    while (this.isWord('AND')) {
      this.take();
      left = { kind: 'and', left, right: this.negation() };
    }
    return left;
  }

  private negation(): Condition {
    if (!this.isWord('NOT')) return this.primary();
    this.take();
    return { kind: 'not', condition: this.negation() };
  }

  private primary(): Condition {
    if (this.isSymbol('(')) {
      this.take();
      const inner = this.condition();
      this.expect(')');
      return inner;
    }
    const { kind, text } = this.next;
    if (kind === 'word' && this.peek(1).text === '(' && CONDITION_FUNCTIONS.has(text)) return this.conditionFunction(text);
    const operand = this.operand();
    if (this.next.kind === 'symbol' && COMPARATORS.has(this.next.text)) {
      const comparator = this.take().text as Comparator;
      return { kind: 'compare', comparator, left: operand, right: this.operand() };
    }
    if (this.isWord('BETWEEN')) {
      this.take();
      const low = this.operand();
      if (!this.isWord('AND')) this.fail('AND');
      this.take();
      return { kind: 'between', operand, low, high: this.operand() };
    }
    if (this.isWord('IN')) {
      this.take();
      this.expect('(');
      const list = [this.operand()];
      while (this.isSymbol(',')) {
        this.take();
        list.push(this.operand());
      }
      this.expect(')');
      return { kind: 'in', operand, list };
    }
    return this.fail('a comparison');
  }

  private conditionFunction(name: string): Condition {
    this.take();
    this.expect('(');
    let condition: Condition;
    if (name === 'attribute_exists' || name === 'attribute_not_exists') {
      condition = { kind: name, path: this.path() };
    } else {
      const operand = this.operand();
      this.expect(',');
      const argument = this.operand();
      if (name === 'begins_with' && argument.kind === 'value' && !('S' in argument.value)) {
        const type = Object.keys(argument.value)[0];
        throw validation(`Invalid ${this.kind}: Incorrect operand type for operator or function; operator or function: begins_with, operand type: ${type}`);
      }
      condition = { kind: name as 'begins_with' | 'contains', operand, argument };
    }
    this.expect(')');
    return condition;
  }

  private operand(): Operand {
    if (this.next.kind === 'value') return { kind: 'value', value: this.placeholders.value(this.take().text, this.kind) };
    if (this.next.kind === 'word' && this.next.text === 'size' && this.peek(1).text === '(') {
      this.take();
      this.expect('(');
      const path = this.path();
      this.expect(')');
      return { kind: 'size', path };
    }
    return { kind: 'path', path: this.path() };
  }

  path(): Path {
    const elements: PathElement[] = [{ name: this.attributeName() }];
    for (;;) {
      if (this.isSymbol('.')) {
        this.take();
        elements.push({ name: this.attributeName() });
      } else if (this.isSymbol('[')) {
        this.take();
        if (this.next.kind !== 'number') this.fail('a list index');
        elements.push({ index: Number(this.take().text) });
        this.expect(']');
      } else {
        return elements as unknown as Path;
      }
    }
  }

  private attributeName(): string {
    const token = this.next;
    if (token.kind === 'name') return this.placeholders.name(this.take().text, this.kind);
    if (token.kind !== 'word') return this.fail('an attribute name');
    if (RESERVED_WORDS.has(token.text.toLowerCase())) throw validation(`Invalid ${this.kind}: Attribute name is a reserved keyword; reserved keyword: ${token.text}`);
    return this.take().text;
  }

  updateActions(): UpdateAction[] {
    const actions: UpdateAction[] = [];
    const sections = new Set<string>();
    do {
      const section = this.next.kind === 'word' ? this.next.text.toUpperCase() : '';
      if (!UPDATE_SECTIONS.has(section)) this.fail('SET, REMOVE, ADD or DELETE');
      if (sections.has(section)) throw new Unsupported(`the expression '${this.expression}' (${section} twice)`);
      sections.add(section);
      this.take();
      actions.push(this.updateAction(section));
      while (this.isSymbol(',')) {
        this.take();
        actions.push(this.updateAction(section));
      }
    } while (this.next.kind !== 'end');
    return actions;
  }

  private updateAction(section: string): UpdateAction {
    const path = this.path();
    if (section === 'REMOVE') return { kind: 'REMOVE', path };
    if (section === 'SET') {
      this.expect('=');
      return { kind: 'SET', path, value: this.setValue() };
    }
    if (this.next.kind !== 'value') this.fail('a value');
    return { kind: section as 'ADD' | 'DELETE', path, value: this.placeholders.value(this.take().text, this.kind) };
  }

  private setValue(): SetValue {
    const left = this.setTerm();
    if (!this.isSymbol('+') && !this.isSymbol('-')) return left;
    const kind = this.take().text as '+' | '-';
    return { kind, left, right: this.setTerm() };
  }

  private setTerm(): SetValue {
    const { kind, text } = this.next;
    if (kind === 'word' && this.peek(1).text === '(' && (text === 'if_not_exists' || text === 'list_append')) {
      this.take();
      this.expect('(');
      const term: SetValue =
        text === 'if_not_exists'
          ? { kind: 'if_not_exists', path: this.pathThen(','), fallback: this.setTerm() }
          : { kind: 'list_append', first: this.setTermThen(','), second: this.setTerm() };
      this.expect(')');
      return term;
    }
    if (this.next.kind === 'value') return { kind: 'value', value: this.placeholders.value(this.take().text, this.kind) };
    return { kind: 'path', path: this.path() };
  }

  private pathThen(symbol: string): Path {
    const path = this.path();
    this.expect(symbol);
    return path;
  }

  private setTermThen(symbol: string): SetValue {
    const term = this.setTerm();
    this.expect(symbol);
    return term;
  }
}

export const parseCondition = (expression: string, kind: ExpressionKind, placeholders: Placeholders): Condition => {
  const reader = new Reader(expression, kind, placeholders);
  const condition = reader.condition();
  reader.end();
  return condition;
};

export const parseUpdate = (expression: string, placeholders: Placeholders): UpdateAction[] => {
  const reader = new Reader(expression, 'UpdateExpression', placeholders);
  const actions = reader.updateActions();
  reader.end();
  return actions;
};

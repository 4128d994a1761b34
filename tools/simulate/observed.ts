import { PK, SK } from '../../functions/store/fields';
import type { Send } from './workload';

/*
 * What a run observed, which its judges read (./judge.ts, ./model-judge.ts): the answers its clients
 * got, the calls that reached the table, and the faults its calls met.
 */

/** What a client got for one attempt of a send. */
export interface Answer {
  readonly actor: string;
  readonly send: Send;
  readonly attempt: number;
  readonly sentAt: number;
  /** The run's clock when it was sent. */
  readonly sentTime: number;
  answeredAt?: number;
  /** The run's clock when it was answered. */
  answeredTime?: number;
  status?: number;
  body?: string;
  /** Its instance died before it answered. */
  died?: boolean;
  /** The steps of the faults its own calls met. */
  readonly faultsAt: number[];
}

/** A fault a call met: which request's, at which step, on which items. */
export interface FaultMet {
  readonly step: number;
  readonly actor: string;
  readonly items: readonly string[];
}

/** A call that reached the table: which request made it, at which step, on which items; a commit when it wrote. */
export interface Reached {
  readonly step: number;
  readonly actor: string;
  readonly items: readonly string[];
  readonly committed: boolean;
  /** Items it only checked. */
  readonly checks: number;
}

/** An item's key as the judges name it. */
export const keyText = (key: Record<string, unknown>) => `${String(key[PK])} ${String(key[SK])}`;

/** An answer's body, or none for one that is not JSON. */
export const bodyOf = (answer: Answer): Record<string, unknown> => {
  try {
    return JSON.parse(answer.body ?? '') as Record<string, unknown>;
  } catch {
    return {};
  }
};

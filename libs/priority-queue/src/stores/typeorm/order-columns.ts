import { orderPartValue, orderParts, type OrderFields, type OrderPart } from '../../core/order-key';
import type { StoreContext } from './context';
import type { Row } from './db';
import { fairTagOf, num } from './rows';
import { raw, sql, type Sql } from './sql/sql';

/**
 * The order key of DESIGN §2 in SQL columns, derived from core's definition (core/order-key.ts
 * orderParts): an index on ORDER_COLUMNS sorts like compareOrder. The parts before runAt (one
 * or two: `priority`; `aged`, `priority`; with fairness `priority`, `fairTag`) go into the
 * bigint columns k1 and k2 (k2 repeats k1 when there is one part), then run_at, created_at and
 * seq. The lanes table keeps a head's key in h1, h2, h_run_at, h_created_at, h_seq likewise:
 * with fairness k2 / h2 IS the fair tag (DESIGN §7), the only place it is kept.
 */
export const ORDER_COLUMNS = 'k1, k2, run_at, created_at, seq';

/** The parts that k1 and k2 hold, per aging interval and fairness. */
const leads = new Map<string, readonly OrderPart[]>();

function leadParts(agingIntervalMs: number, fair: boolean): readonly OrderPart[] {
  const key = `${agingIntervalMs}:${fair}`;
  let lead = leads.get(key);
  if (lead === undefined) {
    const parts = orderParts(agingIntervalMs, fair);
    const i = parts.indexOf('runAt');
    if (i < 1 || i > 2 || parts.slice(i).join() !== 'runAt,createdAt,seq') {
      throw new Error(`the order key (${parts.join(', ')}) does not fit the columns ${ORDER_COLUMNS}`);
    }
    leads.set(key, (lead = parts.slice(0, i)));
  }
  return lead;
}

/** The fields the parts before runAt read. */
export type LeadFields = Omit<OrderFields, 'createdAt' | 'seq'>;

/** k1 and k2 of a task (`fair`: the queue has fairness, t.fairTag is set). */
export function orderColumns(t: LeadFields, agingIntervalMs: number, fair: boolean): { k1: bigint; k2: bigint } {
  const lead = leadParts(agingIntervalMs, fair);
  const f = t as OrderFields; // the lead parts never read createdAt or seq (leadParts)
  const k1 = BigInt(orderPartValue(lead[0], f, agingIntervalMs));
  return { k1, k2: lead.length > 1 ? BigInt(orderPartValue(lead[1], f, agingIntervalMs)) : k1 };
}

/**
 * k1 and k2 as SQL expressions over the row's `priority` column and the given runAt; the fair
 * tag is the row's own (k2: a task keeps its tag when it only moves in time).
 */
export function orderColumnsSql(c: StoreContext, runAt: Sql): { k1: Sql; k2: Sql } {
  const priority = raw(c.d.castBigint('priority'));
  const [a, b] = leadParts(c.aging, c.fair).map((p): Sql => {
    switch (p) {
      case 'aged':
        return sql`(${runAt}) - ${priority} * ${c.aging}`;
      case 'priority':
        return sql`-${priority}`;
      case 'fairTag':
        return sql`k2`;
      default:
        throw new Error(`order part ${p} has no SQL expression`);
    }
  });
  return { k1: a, k2: b ?? a };
}

/** `(k1, k2, run_at, created_at, seq)` values of a task, to compare with ORDER_COLUMNS. */
export function orderTuple(c: StoreContext, f: OrderFields): Sql {
  const { k1, k2 } = orderColumns(f, c.aging, c.fair);
  return sql`(${c.big(k1)}, ${c.big(k2)}, ${f.runAt}, ${f.createdAt}, ${f.seq})`;
}

/**
 * The order fields of a row: a task's columns, or with `prefix` 'h_' a lane's head; `fair`: the
 * queue has fairness, the tag is k2 (a lane's h2).
 */
export function orderOfRow(r: Row, fair: boolean, prefix = ''): OrderFields {
  const f: OrderFields = { priority: num(r[prefix + 'priority']), runAt: num(r[prefix + 'run_at']), createdAt: num(r[prefix + 'created_at']), seq: num(r[prefix + 'seq']) };
  if (fair) f.fairTag = fairTagOf(r[prefix === '' ? 'k2' : 'h2']);
  return f;
}

/**
 * A tiny SQL builder: a tagged template whose values become `?` parameters, except `raw()`
 * text and nested fragments. Keeps each query readable in one place.
 */
export class Sql {
  constructor(
    readonly text: string,
    readonly params: readonly unknown[],
  ) {}
}

class Raw {
  constructor(readonly text: string) {}
}

export function raw(text: string): Raw {
  return new Raw(text);
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  let text = strings[0];
  const params: unknown[] = [];
  values.forEach((v, i) => {
    if (v instanceof Raw) text += v.text;
    else if (v instanceof Sql) {
      text += v.text;
      params.push(...v.params);
    } else {
      text += '?';
      params.push(v);
    }
    text += strings[i + 1];
  });
  return new Sql(text, params);
}

/** `?, ?, ?` for a list (never empty: callers check); a fragment among the values goes in as its text. */
export function list(values: readonly unknown[]): Sql {
  if (!values.some((v) => v instanceof Sql)) return new Sql(values.map(() => '?').join(', '), values);
  // a fragment among the values (e.g. the server clock of a create) goes in as written
  const params: unknown[] = [];
  const text = values.map((v) => (v instanceof Sql ? (params.push(...v.params), v.text) : (params.push(v), '?'))).join(', ');
  return new Sql(text, params);
}

export function join(parts: readonly Sql[], sep: string): Sql {
  return new Sql(parts.map((p) => p.text).join(sep), parts.flatMap((p) => p.params));
}

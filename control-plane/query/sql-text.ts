/** Parameterised SQL text: `text` uses $1..$n placeholders bound to `values` in order. */
export interface SqlText {
  text: string;
  values: unknown[];
}

type Bindable = string | number | boolean | null;

/**
 * Collects parameters while a statement is assembled. Every value travels as text and is cast in
 * SQL (`$1::text::numeric`), so the driver never re-encodes it by a guessed parameter type and a
 * cursor's timestamp keeps its microseconds.
 */
export class Params {
  readonly values: unknown[] = [];

  bind(value: Bindable | Bindable[], cast = 'text'): string {
    const asText = (v: Bindable) => (v === null ? null : String(v));
    this.values.push(Array.isArray(value) ? value.map(asText) : asText(value));
    const placeholder = `$${this.values.length}`;
    const base = cast.replace(/\[\]$/, '');
    if (cast.endsWith('[]')) return base === 'text' ? `${placeholder}::text[]` : `${placeholder}::text[]::${cast}`;
    return cast === 'text' ? `${placeholder}::text` : `${placeholder}::text::${cast}`;
  }
}

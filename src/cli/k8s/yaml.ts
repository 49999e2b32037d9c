// JSON-shaped data (objects, arrays, strings, numbers, booleans, null) as
// block YAML, for the manifests `warden k8s` prints. Written here rather than
// taken from a YAML library: emitting a tree that JSON could hold is a few
// rules, and the CLI's package stays without a dependency for it. Anything
// that could read back as something else (yes, null, 1e3, 0x10, a leading
// digit, a space, an indicator) is a JSON string, which YAML reads as the
// same string; yaml.test.ts parses every output back with a real parser.

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json | undefined };

/** Words YAML 1.1 or 1.2 reads as a boolean or null when plain. */
const RESERVED = /^(?:y|n|yes|no|on|off|true|false|null|~)$/i;
/** A plain scalar that reads back as this string in YAML 1.1 and 1.2: starts with a letter, '_', '/' or '-' then a letter or '-'. */
const PLAIN = /^(?:[A-Za-z_/]|-[A-Za-z-])[A-Za-z0-9_/.=-]*(?::[A-Za-z0-9_/.=-]+)*$/;

export function scalar(value: string | number | boolean | null): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`YAML for a manifest holds finite numbers, not ${value}.`);
    return String(value);
  }
  return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
}

const isCollection = (value: Json | undefined): value is Json[] | { [key: string]: Json | undefined } => typeof value === 'object' && value !== null;
const entriesOf = (value: { [key: string]: Json | undefined }) => Object.entries(value).filter((e): e is [string, Json] => e[1] !== undefined);
const isEmpty = (value: Json[] | { [key: string]: Json | undefined }) => (Array.isArray(value) ? value.length === 0 : entriesOf(value).length === 0);

function lines(value: Json, indent: string): string[] {
  if (!isCollection(value)) return [`${indent}${scalar(value)}`];
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      if (isCollection(item) && !isEmpty(item)) {
        // The first line of the item goes after "- "; the rest keep the item's indent.
        const [first, ...rest] = lines(item, `${indent}  `);
        return [`${indent}- ${first!.slice(indent.length + 2)}`, ...rest];
      }
      return [`${indent}- ${isCollection(item) ? (Array.isArray(item) ? '[]' : '{}') : scalar(item)}`];
    });
  }
  return entriesOf(value).flatMap(([key, item]) => {
    const name = scalar(key);
    if (!isCollection(item)) return [`${indent}${name}: ${scalar(item)}`];
    if (isEmpty(item)) return [`${indent}${name}: ${Array.isArray(item) ? '[]' : '{}'}`];
    // A list of numbers (exit codes) reads best on one line, as people write it.
    if (Array.isArray(item) && item.every((x) => typeof x === 'number')) return [`${indent}${name}: [${item.map((x) => scalar(x)).join(', ')}]`];
    // A list under a key sits at the key's indent, as kubectl writes it.
    return [`${indent}${name}:`, ...lines(item, Array.isArray(item) ? indent : `${indent}  `)];
  });
}

/** One YAML document for `value` (a collection at the top), ending in a newline. */
export function toYaml(value: Json): string {
  if (isCollection(value) && isEmpty(value)) return `${Array.isArray(value) ? '[]' : '{}'}\n`;
  return `${lines(value, '').join('\n')}\n`;
}

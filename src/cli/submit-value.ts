/**
 * The value `loopfleet submit-input` sends: JSON when the text parses as JSON and every number in it
 * survives the trip (`42`, `true`, `{"a":1}`), the text itself otherwise — `yes`, and also
 * `12345678901234567890` or `0.1000000000000000055511151231257827`, which a JS number would change
 * (to 12345678901234567000, 0.1). The model sees a string answer as it is and any other as its JSON
 * text, so the digits typed are the digits it reads either way.
 */
export function parseSubmitValue(raw: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
  return numbersExact(raw) ? value : raw;
}

/** A JSON string (skipped, with its escapes) or a JSON number: outside strings, the only digits. */
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** Whether every number of `json` (valid JSON) has the value a JS number gives it back as. */
function numbersExact(json: string): boolean {
  for (const [token] of json.matchAll(TOKEN)) {
    if (token.startsWith('"')) continue;
    if (!sameDecimal(token, JSON.stringify(Number(token)))) return false;
  }
  return true;
}

/**
 * Whether two decimal literals denote the same number (`1.50` and `1.5`, `1e3` and `1000`; every
 * zero alike). `JSON.stringify` writes a number past the double range as `null`: never the same.
 */
function sameDecimal(a: string, b: string): boolean {
  const x = normalise(a);
  const y = normalise(b);
  return x !== null && y !== null && x.sign === y.sign && x.digits === y.digits && x.exponent === y.exponent;
}

/** `sign`, significant `digits` with no leading or trailing zeros, and `exponent` of the last digit. */
function normalise(literal: string): { sign: string; digits: string; exponent: number } | null {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (match === null) return null;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const all = `${whole}${fraction}`.replace(/^0+/, '');
  const digits = all.replace(/0+$/, '');
  if (digits === '') return { sign: '', digits: '', exponent: 0 };
  return { sign: sign!, digits, exponent: Number(exponent) - fraction.length + (all.length - digits.length) };
}

// Checks of what a JavaScript caller hands the SDK, before anything reaches
// the library: JavaScript converts silently ("hello" becomes NaN, an unknown
// option is ignored, 300 becomes 44 in a Uint8Array), so each check throws a
// TypeError (wrong kind of value) or RangeError (a value out of range)
// naming the value.

/** The most dimensions a tensor may have (the C ABI's maxRank, capi/tensors.go). */
export const MAX_RANK = 64;

/** A value as an error message shows it: strings quoted, short arrays listed, objects by constructor. */
export function describe(v: unknown, nested = false): string {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (typeof v === "bigint") return `${v}n`;
  if (v === null || typeof v !== "object") return String(v);
  if (Array.isArray(v)) {
    return v.length <= 8 && !nested ? `[${v.map((x) => describe(x, true)).join(", ")}]` : `an array of ${v.length}`;
  }
  const name = (v as { constructor?: { name?: string } }).constructor?.name;
  return name ? article(name) : "an object";
}

/** "a Float32Array", "an Object", "an i64". */
export function article(word: string): string {
  return `${/^[aeiouAEIOU]/.test(word) ? "an" : "a"} ${word}`;
}

/** Checks that a shape-like list (which may hold -1, as reshape's) has at most MAX_RANK entries. */
export function checkRank(shape: readonly unknown[], what: string): void {
  if (shape.length > MAX_RANK) {
    throw new RangeError(`webtensor: ${what} has ${shape.length} dimensions, more than the ${MAX_RANK} a tensor may have`);
  }
}

/** Checks a shape: an array of at most MAX_RANK integers >= 0. */
export function checkShape(shape: readonly number[], what = "shape"): void {
  if (!Array.isArray(shape)) throw new TypeError(`webtensor: ${what} must be an array of integers, got ${describe(shape)}`);
  checkRank(shape, what);
  for (const s of shape) {
    if (!Number.isSafeInteger(s) || s < 0) {
      throw new TypeError(`webtensor: bad ${what} ${describe(shape)}: extents are integers >= 0, got ${describe(s)}`);
    }
  }
}

/**
 * Checks an options object: an object (or undefined) whose keys are all in
 * known; a mistyped or unsupported key (requiresGrad where an op has no such
 * attribute) is a TypeError naming it and listing the known ones.
 */
export function checkOptions(what: string, options: unknown, known: readonly string[], noun = "option"): Record<string, unknown> {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError(`webtensor: ${what}: ${noun}s come in an object (${known.join(", ") || "it takes none"}), got ${describe(options)}`);
  }
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) {
      const extra = k === "requiresGrad" ? "; set requiresGrad on the result (t.requiresGrad = true)" : "";
      throw new TypeError(`webtensor: ${what}: unknown ${noun} ${JSON.stringify(k)} (${known.length ? `${noun}s: ${known.join(", ")}` : "it takes none"})${extra}`);
    }
  }
  return options as Record<string, unknown>;
}

/**
 * The attributes of a generated op function: options renamed from camelCase
 * to the manifest's names (names maps one to the other), after checking that
 * every key is one of the op's attributes. The generated functions call it,
 * so an attribute the op does not have is an error, not silently dropped.
 */
export function attrsOf(op: string, options: unknown, names: Readonly<Record<string, string>>): Record<string, never> {
  const given = checkOptions(op, options, Object.keys(names), "attribute");
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(given)) out[names[k]!] = v;
  return out as Record<string, never>;
}

/** Range of each integer dtype a JavaScript number or bigint must fall in. */
const INT_RANGE: Record<string, readonly [bigint, bigint]> = {
  i64: [-(2n ** 63n), 2n ** 63n - 1n], i32: [-(2n ** 31n), 2n ** 31n - 1n], u32: [0n, 2n ** 32n - 1n],
  i16: [-(2n ** 15n), 2n ** 15n - 1n], i8: [-128n, 127n], u8: [0n, 255n],
  u16: [0n, 2n ** 16n - 1n], u64: [0n, 2n ** 64n - 1n],
};

/**
 * Checks one element of nested data for a tensor of dtype dt (index: where
 * it is, for the message); non-integers truncate toward zero into integer
 * dtypes, as PyTorch's do, but NaN, infinities and values out of range do not
 * fit and are RangeErrors.
 */
export function checkElement(v: unknown, dt: string, index: () => readonly number[]): void {
  const at = () => {
    const i = index();
    return i.length ? `element [${i.join("][")}]` : "the scalar";
  };
  if (typeof v !== "number" && typeof v !== "boolean" && typeof v !== "bigint") {
    throw new TypeError(`webtensor: tensor(): ${at()} is ${describe(v)}; elements are numbers, booleans or bigints`);
  }
  const range = INT_RANGE[dt];
  if (range === undefined || typeof v === "boolean") return;
  if (typeof v === "number" && !Number.isFinite(v)) {
    throw new RangeError(`webtensor: tensor(): ${at()} is ${v}, which ${article(dt)} tensor cannot hold`);
  }
  const n = typeof v === "bigint" ? v : BigInt(Math.trunc(v));
  if (n < range[0] || n > range[1]) {
    throw new RangeError(`webtensor: tensor(): ${at()} is ${describe(v)}, outside the range of ${dt} [${range[0]}, ${range[1]}]`);
  }
}

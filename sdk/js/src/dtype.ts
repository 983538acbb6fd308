// Element types: names and codes match wt_dtype (capi/include/webtensor.h).

export type DType =
  | "f32" | "f16" | "bf16" | "f64" | "i64" | "i32" | "u32" | "i16" | "i8" | "u8" | "bool" | "c64" | "c128" | "u16" | "u64";

export type TypedArray =
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array
  | Int32Array
  | Uint32Array
  | Int16Array
  | Int8Array
  | Uint8Array
  | Uint16Array;

/**
 * The typed array that holds each dtype; f16 and bf16 are raw bits in a
 * Uint16Array (Node 20 has no Float16Array). JS has no complex numbers, so
 * c64 and c128 are their parts interleaved, real first, in a Float32Array or
 * Float64Array of 2 * size values: the layout of the runtime's storage and
 * of PyTorch's view_as_real, which is why reading and writing them is a
 * plain copy.
 */
export interface DataTypeMap {
  f32: Float32Array;
  f16: Uint16Array;
  bf16: Uint16Array;
  f64: Float64Array;
  i64: BigInt64Array;
  i32: Int32Array;
  u32: Uint32Array;
  i16: Int16Array;
  i8: Int8Array;
  u8: Uint8Array;
  bool: Uint8Array;
  c64: Float32Array;
  c128: Float64Array;
  u16: Uint16Array;
  u64: BigUint64Array;
}

interface Info {
  code: number;
  /** Bytes per element (a complex element is both its parts). */
  size: number;
  floating: boolean;
  /** A complex dtype's part dtype: its elements are two of those in the typed array. */
  part?: DType;
  array: { new (buf: ArrayBuffer, off: number, len: number): TypedArray; new (len: number): TypedArray };
}

export const DTYPES: Record<DType, Info> = {
  f32: { code: 1, size: 4, floating: true, array: Float32Array },
  f16: { code: 2, size: 2, floating: true, array: Uint16Array },
  bf16: { code: 3, size: 2, floating: true, array: Uint16Array },
  f64: { code: 4, size: 8, floating: true, array: Float64Array },
  i64: { code: 5, size: 8, floating: false, array: BigInt64Array as unknown as Info["array"] },
  i32: { code: 6, size: 4, floating: false, array: Int32Array },
  u32: { code: 7, size: 4, floating: false, array: Uint32Array },
  i16: { code: 8, size: 2, floating: false, array: Int16Array },
  i8: { code: 9, size: 1, floating: false, array: Int8Array },
  u8: { code: 10, size: 1, floating: false, array: Uint8Array },
  bool: { code: 11, size: 1, floating: false, array: Uint8Array },
  c64: { code: 12, size: 8, floating: false, part: "f32", array: Float32Array },
  c128: { code: 13, size: 16, floating: false, part: "f64", array: Float64Array },
  u16: { code: 14, size: 2, floating: false, array: Uint16Array },
  u64: { code: 15, size: 8, floating: false, array: BigUint64Array as unknown as Info["array"] },
};

/** How many typed-array values hold one element of dt: 2 for a complex dtype (its parts), else 1. */
export function lanes(dt: DType): number {
  return DTYPES[dt].part ? 2 : 1;
}

const BY_CODE = new Map<number, DType>(Object.entries(DTYPES).map(([n, i]) => [i.code, n as DType]));

export function dtypeFromCode(code: number): DType {
  const d = BY_CODE.get(code);
  if (!d) throw new Error(`webtensor: unknown dtype code ${code}`);
  return d;
}

const ALIASES: Record<string, DType> = {
  float32: "f32", float16: "f16", bfloat16: "bf16", float64: "f64", int64: "i64", int32: "i32",
  uint32: "u32", int16: "i16", int8: "i8", uint8: "u8", complex64: "c64", complex128: "c128",
  uint16: "u16", uint64: "u64",
};

/** Checks a dtype name (aliases such as "float32" accepted); throws a TypeError naming the bad value. */
export function toDType(d: unknown): DType {
  if (typeof d === "string") {
    if (d in DTYPES) return d as DType;
    const a = ALIASES[d];
    if (a) return a;
  }
  throw new TypeError(`webtensor: unknown dtype ${JSON.stringify(d)} (one of ${Object.keys(DTYPES).join(", ")})`);
}

// By the array's own tag, not instanceof: an array made in another realm
// (a vm context, an iframe) has other constructors.
const BY_TAG: Record<string, DType> = {
  Float32Array: "f32", Float64Array: "f64", BigInt64Array: "i64", Int32Array: "i32", Uint32Array: "u32",
  Int16Array: "i16", Int8Array: "i8", Uint8Array: "u8", BigUint64Array: "u64",
};

/** The dtype a typed array holds by default; Uint16Array is ambiguous (u16, f16 or bf16 bits) and needs a dtype. */
export function dtypeOfArray(a: TypedArray): DType {
  const tag = (a as { [Symbol.toStringTag]?: string })[Symbol.toStringTag] ?? "";
  const d = BY_TAG[tag];
  if (d !== undefined) return d;
  if (tag === "Uint16Array") {
    throw new TypeError("webtensor: a Uint16Array holds u16 values or f16 or bf16 bits; pass { dtype: 'u16' }, { dtype: 'f16' } or { dtype: 'bf16' }");
  }
  throw new TypeError(`webtensor: a ${tag || typeof a} has no webtensor dtype (Uint8ClampedArray and Float16Array are not supported)`);
}

/** What one element type is: Python's wt.DType (wt.f32 ...), its fields in camelCase. */
export interface DTypeInfo {
  readonly name: DType;
  /** The wt_dtype code the runtime uses. */
  readonly code: number;
  /** Bytes per element. */
  readonly itemsize: number;
  /** False for c64 and c128, as Python's is_floating: they have their own flag. */
  readonly isFloating: boolean;
  readonly isComplex: boolean;
}

/**
 * The element types by name ("f32" ... "bool", "c64", "c128", and aliases
 * such as "float32" or "complex64"): `wt.DType.f16.itemsize`. The type
 * DType is their names, which is what options take.
 */
export const DType: Readonly<Record<string, DTypeInfo>> = Object.freeze(
  Object.fromEntries(
    [...Object.entries(DTYPES), ...Object.entries(ALIASES).map(([a, n]) => [a, DTYPES[n]] as const)].map(([name, i]) => [
      name,
      Object.freeze({ name: (BY_CODE.get(i.code) ?? name) as DType, code: i.code, itemsize: i.size,
        isFloating: i.floating, isComplex: i.part !== undefined }),
    ]),
  ),
);

// Keeping the memory fromArray lends to the library where it is (Node).
//
// The library reads a lent typed array's memory through a raw pointer, so
// holding the typed array is not enough: an ArrayBuffer can be detached,
// and its memory then belongs to the buffer it was transferred to, which is
// freed when that one is collected. `structuredClone(a.buffer, {transfer:
// [a.buffer]})` followed by a collection crashed the process with SIGSEGV in
// the next op. So a lent buffer is pinned:
// - markAsUntransferable: postMessage and structuredClone then copy it
//   instead of detaching it (every Node version);
// - ArrayBuffer.prototype.transfer and transferToFixedLength (Node 22+) of
//   the buffer's realm refuse a pinned buffer with a TypeError while the
//   library uses it; other buffers pass through untouched. (A realm's method
//   called on a buffer of another realm that no lent buffer came from is
//   not guarded: the one way left to detach a lent buffer on purpose.)
// A resizable ArrayBuffer could shrink under the tensor, so it is not lent:
// the caller copies it. A SharedArrayBuffer can neither be detached nor
// shrink, so it is lent as is.

import { markAsUntransferable } from "node:worker_threads";
import type { TypedArray } from "./dtype.js";

const pinned = new WeakSet<object>();
const guarded = new WeakSet<object>();

type Transfer = (this: ArrayBuffer, ...args: unknown[]) => ArrayBuffer;

/** Wraps the detaching methods of a realm's ArrayBuffer.prototype once, so they refuse pinned buffers. */
function guardRealm(proto: Record<string, unknown> | null): void {
  if (proto === null || guarded.has(proto)) return;
  guarded.add(proto);
  for (const name of ["transfer", "transferToFixedLength"]) {
    const original = proto[name];
    if (typeof original !== "function") continue;
    const method = original as Transfer;
    Object.defineProperty(proto, name, {
      configurable: true,
      writable: true,
      enumerable: false,
      value: {
        [name](this: ArrayBuffer, ...args: unknown[]): ArrayBuffer {
          if (pinned.has(this)) {
            throw new TypeError(
              `webtensor: ArrayBuffer.prototype.${name}(): this buffer of ${this.byteLength} bytes is lent to a tensor ` +
                "by fromArray(), whose memory the library reads; detaching it would free that memory under the tensor " +
                "(dispose the tensor first, or copy the buffer with slice())",
            );
          }
          return method.apply(this, args);
        },
      }[name],
    });
  }
}

/**
 * Pins data's buffer for lending; false when it cannot be lent without a
 * risk to the process (a resizable ArrayBuffer), and must be copied.
 */
export function pin(data: TypedArray): boolean {
  const buf = data.buffer as ArrayBuffer & { resizable?: boolean };
  // toString, not instanceof: the array may come from another realm.
  if (Object.prototype.toString.call(buf) === "[object SharedArrayBuffer]") return true;
  if (buf.resizable === true) return false;
  markAsUntransferable(buf);
  pinned.add(buf);
  guardRealm(Object.getPrototypeOf(buf) as Record<string, unknown> | null);
  return true;
}

/**
 * Lets transfer() detach a buffer again once the library has let go of it
 * (postMessage keeps copying it: markAsUntransferable cannot be undone).
 * Another lent array over the same buffer pins it again.
 */
export function unpin(data: TypedArray, stillLent: (buf: ArrayBufferLike) => boolean): void {
  if (!stillLent(data.buffer)) pinned.delete(data.buffer);
}

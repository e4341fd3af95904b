/**
 * Creates a value on first use and shares it afterwards. Keeps heavy clients
 * (Firestore, Cloud Tasks) out of a function's cold start until a request
 * needs them. A failed creation is not cached, so the next call tries again.
 */
export function lazy<T>(create: () => T): () => T {
  let made = false;
  let value: T | undefined;
  return () => {
    if (!made) {
      value = create();
      made = true;
    }
    return value as T;
  };
}

/** Like {@link lazy} for async factories; a rejected promise is dropped so the next call retries. */
export function lazyAsync<T>(create: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    if (pending === undefined) {
      pending = create().catch((err: unknown) => {
        pending = undefined;
        throw err;
      });
    }
    return pending;
  };
}

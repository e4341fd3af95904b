/** jest globalTeardown: stops exactly the emulators global-setup.ts started (none if it reused running ones). */
import './global-setup'; // declares the typed `__jestEmulators__` global

export default async function globalTeardown(): Promise<void> {
  const session = globalThis.__jestEmulators__;
  globalThis.__jestEmulators__ = undefined;
  if (session !== undefined) await session.stop();
}

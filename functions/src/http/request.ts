import type { Request } from '@google-cloud/functions-framework';
import { z } from 'zod';
import type { PushTokenVerifier } from '../auth/push-token';
import type { Rejection } from './answer';

/**
 * The opening every function shares: each is called with POST only (Pub/Sub
 * push, Cloud Tasks, Cloud Scheduler, startProcess's callers), so anything
 * else is a 405 that names POST in `Allow` and says in `usage` how to call it.
 * null when the method is right.
 */
export function refuseMethod(req: Request, usage: string): Rejection | null {
  return req.method === 'POST' ? null : { kind: 'reject', status: 405, error: usage, allow: ['POST'] };
}

/** A request body as its schema reads it, or the 400 that says which field is wrong. */
export type ParsedBody<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly answer: Rejection };

/**
 * Reads the request body with a zod schema: 400 with zod's message, which
 * names the field, when it does not fit. The JSON itself is parsed before the
 * function runs (the Functions Framework's body parser, for
 * `application/json`; it answers malformed JSON 400 itself); another content
 * type leaves a string or a Buffer here, which no object schema accepts.
 * A bad body is a permanent error: never answered as retryable.
 */
export function parseBody<S extends z.ZodType>(req: Request, schema: S): ParsedBody<z.output<S>> {
  const parsed = schema.safeParse(req.body);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, answer: { kind: 'reject', status: 400, error: z.prettifyError(parsed.error) } };
}

/**
 * The OIDC token Cloud Tasks signs, checked when a verifier is configured
 * (null: the local emulator signs none, or auth is off): 401/403 otherwise.
 * runJob and fireTimer open with it.
 */
export async function refuseToken(
  verifier: (() => Promise<PushTokenVerifier>) | null,
  req: Request,
): Promise<Rejection | null> {
  if (verifier === null) return null;
  const auth = await (await verifier())(req.get('authorization'));
  return auth.ok ? null : { kind: 'reject', status: auth.status, error: auth.error };
}

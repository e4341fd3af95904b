import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * Loads the `google.cloud.tasks.v2.CloudTasks` service definition from the
 * .proto files that ship with `@google-cloud/tasks`, so the emulator speaks
 * exactly the wire format of the client version the project installs.
 *
 * Both packages that hold the protos are dependencies of this package
 * (package.json): `@google-cloud/tasks` (google/cloud/tasks/v2) and
 * `google-gax` (google/api, google/rpc, google/iam, google/type,
 * google/protobuf, which the tasks protos import but do not ship). Resolved,
 * not vendored: a vendored copy would drift from the client the tests drive.
 */

const SERVICE = 'google.cloud.tasks.v2.CloudTasks';
const ENTRY = 'google/cloud/tasks/v2/cloudtasks.proto';
/** One file the tasks protos import from google-gax's copy, to check the layout up front. */
const COMMON = 'google/api/annotations.proto';

/**
 * How decoded requests look to the handlers (see messages.ts):
 * camelCase fields, enums as their names, int64 as decimal strings, bytes as
 * Buffer, unset fields absent (proto3 cannot tell "unset" from 0 anyway, and
 * absent fields make "use the default" checks explicit).
 */
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: false,
  oneofs: false,
};

/**
 * The folder of the installed package `name`, found as Node finds it from
 * this file: the first `node_modules/<name>/package.json` on the module
 * search path that names `name`. Neither package exports its package.json
 * (`require.resolve('google-gax/package.json')` is ERR_PACKAGE_PATH_NOT_EXPORTED),
 * and walking up from the entry point would guess its depth.
 */
export function installedPackageDir(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    const manifest = path.join(dir, name, 'package.json');
    if (!existsSync(manifest)) continue;
    const declared: unknown = JSON.parse(readFileSync(manifest, 'utf8'));
    if (typeof declared === 'object' && declared !== null && (declared as { name?: unknown }).name === name)
      return path.dirname(manifest);
  }
  throw new Error(
    `${name} is not installed where ${__dirname} can see it; it is a dependency of @inbox/cloud-tasks-emulator (run npm ci at the repository root)`,
  );
}

/** `dir/build/protos`, after checking that it holds `file`: a changed package layout fails here, by name. */
function protosOf(pkg: string, file: string): string {
  const dir = path.join(installedPackageDir(pkg), 'build', 'protos');
  if (!existsSync(path.join(dir, file)))
    throw new Error(
      `${pkg} no longer ships ${file} under build/protos (looked in ${dir}); protos.ts must follow its new layout`,
    );
  return dir;
}

/** The include directories: the tasks package's protos, then google-gax's common ones. */
export function protoIncludeDirs(): string[] {
  return [protosOf('@google-cloud/tasks', ENTRY), protosOf('google-gax', COMMON)];
}

let cached: grpc.ServiceDefinition | undefined;

/** The CloudTasks service definition, ready for `server.addService` (loaded once per process). */
export function cloudTasksService(): grpc.ServiceDefinition {
  if (cached !== undefined) return cached;
  const pkg = protoLoader.loadSync(ENTRY, { ...LOADER_OPTIONS, includeDirs: protoIncludeDirs() });
  const def = pkg[SERVICE];
  // Message and enum definitions carry a `format`; services are plain method maps.
  if (def === undefined || 'format' in def) throw new Error(`${SERVICE} not found in ${ENTRY}`);
  cached = def;
  return def;
}

import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * Loads the `google.cloud.tasks.v2.CloudTasks` service definition from the
 * .proto files that ship with `@google-cloud/tasks`, so the emulator speaks
 * exactly the wire format of the client version the project installs.
 */

const SERVICE = 'google.cloud.tasks.v2.CloudTasks';
const ENTRY = 'google/cloud/tasks/v2/cloudtasks.proto';

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
 * The include directories: the tasks package's own protos, plus google-gax's
 * copies of google/api, google/rpc, google/iam and google/protobuf, which the
 * tasks protos import but do not ship.
 */
export function protoIncludeDirs(): string[] {
  // `@google-cloud/tasks` restricts subpath imports via "exports", so locate
  // files relative to its resolved entry point (build/cjs/src/index.cjs).
  const tasksEntry = require.resolve('@google-cloud/tasks');
  const tasksBuild = path.resolve(path.dirname(tasksEntry), '..', '..');
  // google-gax is the tasks client's dependency, not ours: resolve it from there.
  const gaxEntry = require.resolve('google-gax', { paths: [path.dirname(tasksEntry)] });
  const gaxBuild = path.resolve(path.dirname(gaxEntry), '..');
  return [path.join(tasksBuild, 'protos'), path.join(gaxBuild, 'protos')];
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

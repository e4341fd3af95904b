import { protos } from '@google-cloud/tasks';
import { sep } from 'node:path';
import { cloudTasksService, installedPackageDir, protoIncludeDirs } from '../src/protos';

/** Where the emulator's schema comes from: the installed client's own protos, found through this package's dependencies. */

test("the protos come from the @google-cloud/tasks install the client code loads, and google-gax's common ones", () => {
  const [tasksProtos, gaxProtos] = protoIncludeDirs();
  const tasksDir = installedPackageDir('@google-cloud/tasks');
  expect(tasksProtos).toBe(`${tasksDir}${sep}build${sep}protos`);
  expect(require.resolve('@google-cloud/tasks').startsWith(`${tasksDir}${sep}`)).toBe(true);
  expect(gaxProtos).toBe(`${installedPackageDir('google-gax')}${sep}build${sep}protos`);
});

test("the service the emulator serves has exactly the methods of the client's compiled CloudTasks service", () => {
  const served = Object.keys(cloudTasksService()).sort();
  const compiled = Object.getOwnPropertyNames(protos.google.cloud.tasks.v2.CloudTasks.prototype)
    .filter((m) => m !== 'constructor')
    .map((m) => m[0]?.toUpperCase() + m.slice(1))
    .sort();
  expect(compiled.length).toBeGreaterThan(10);
  expect(served).toEqual(compiled);
});

test('a package that is not installed is named in the error', () => {
  expect(() => installedPackageDir('@inbox/no-such-package')).toThrow(/@inbox\/no-such-package is not installed/);
});

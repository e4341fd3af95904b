/**
 * `npm run tasks-emulator`: the Cloud Tasks emulator
 * (packages/cloud-tasks-emulator) with the queues this project's
 * configuration names already created, for functions served by hand (see
 * the README, "Running a function locally"). The configuration is read from
 * the environment as the functions read it (GOOGLE_CLOUD_PROJECT defaults
 * to demo-inbox, as in `npm start`); arguments go to the emulator's CLI
 * (`-- --port=8123`). Prints the `export` line for the functions' shells.
 */
import { runCliAsProcess } from '@inbox/cloud-tasks-emulator';
import { loadConfig } from '../../functions/src/config';
import { localQueues, localTasksEnv } from './local-tasks';

const config = loadConfig({ GOOGLE_CLOUD_PROJECT: 'demo-inbox', ...process.env });

runCliAsProcess(process.argv.slice(2), {
  queues: localQueues(config),
  started: (emulator) => {
    const env = {
      GOOGLE_CLOUD_PROJECT: config.projectId,
      ...localTasksEnv(emulator, config.projectId, config.tasks.serviceAccount),
    };
    console.log(
      `\nFor the functions (runJob and fireTimer check the emulator's tokens while INBOX_PUSH_AUTH=enabled):\n  export ${Object.entries(
        env,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}\n`,
    );
  },
});

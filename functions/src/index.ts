/**
 * Entry point: registers every function with the Functions Framework.
 * `functions-framework --target=<name>` (and Cloud Functions) serves one of them.
 * Configuration is parsed here, once, so a bad variable stops the start-up
 * with a message that names it.
 */
import { http } from '@google-cloud/functions-framework';
import { loadConfig } from './config';
import { createReceivePubSubPush } from './receiver/function';

const config = loadConfig();

http('receivePubSubPush', createReceivePubSubPush(config));

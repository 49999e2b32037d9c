#!/usr/bin/env node
// The `warden` command. Runs the TypeScript sources through tsx, so a checkout
// works right after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.stdout.on('error', () => undefined); // a closed pipe (| head) is not our error
process.exitCode = await main(process.argv.slice(2));

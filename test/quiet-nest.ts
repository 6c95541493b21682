import { Logger } from '@nestjs/common';
import { logLevels } from '#config/config.js';

/**
 * Before each e2e file's modules load: Nest's static logger at the suite's LOG_LEVEL (error
 * unless set). Importing both apps' modules into one test process makes @nestjs/typeorm warn
 * that a data source named "default" is already registered; that is true only of the test
 * process (each app has its own container, and each runs alone in production), and the
 * warning is printed at import time, before any app sets its logger.
 */
Logger.overrideLogger(logLevels(process.env.LOG_LEVEL ?? 'error'));

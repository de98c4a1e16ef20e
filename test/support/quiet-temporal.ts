import { DefaultLogger, Runtime } from '@temporalio/worker';

// Workers in tests log warnings and errors only; INFO lines for every state change drown the report.
Runtime.install({ logger: new DefaultLogger('WARN') });

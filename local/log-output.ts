/**
 * How `npm start` prints the functions' log entries, set before any module builds its Powertools
 * Logger (local/start.ts imports this module first, and ES modules run in the order imported).
 * To a terminal, Powertools' development mode: each entry through the global console, where
 * ./log-lines prints it on one line (a request's, on the server's own line for it), or with
 * --json-logs as Powertools indents it. To a pipe or a file, one JSON line per entry, as on Lambda,
 * for `jq` or a log agent. Either way the same entries, with the same fields, and no metric
 * entries: nothing reads the embedded metric format here, and its lines would come between the
 * events and the request log. Set here whatever the shell or a parent process set, so that the
 * output follows from where it goes.
 */
if (process.stdout.isTTY) process.env.POWERTOOLS_DEV = 'true';
else delete process.env.POWERTOOLS_DEV;
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

import { createServer } from 'node:http';

/**
 * The bench's webhook receiver, in its own process so autocannon's load does not delay
 * its event loop: records when each delivery arrived, answers 204, reports on request, and
 * forgets what it holds when told (after the warm-up), reporting the empty list once it has.
 */
const receipts: { receivedAt: number; occurredAt: string; type: string; headers: Record<string, unknown>; body: string }[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const receivedAt = Date.now();
    const body = Buffer.concat(chunks).toString('utf8');
    const event = JSON.parse(body);
    receipts.push({ receivedAt, occurredAt: event.occurredAt, type: event.type, headers: req.headers, body });
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }));
process.on('message', (message) => {
  if (message === 'reset') receipts.length = 0;
  if (message === 'report' || message === 'reset') process.send?.({ receipts });
});
process.on('disconnect', () => process.exit(0));

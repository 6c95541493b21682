import { execFile } from 'node:child_process';

/**
 * Validates an OpenAPI document with @apidevtools/swagger-parser in a plain Node process:
 * the validator is CommonJS that require()s an ES module, which Node ≥ 20.19 loads but
 * Jest's module loader cannot. Resolves to `valid <version>` or `invalid <reason>`.
 */
export function validateOpenApi(document: unknown): Promise<string> {
  const script = `
    import SwaggerParser from '@apidevtools/swagger-parser';
    let input = '';
    process.stdin.on('data', (chunk) => (input += chunk)).on('end', async () => {
      try {
        const api = await SwaggerParser.validate(JSON.parse(input));
        process.stdout.write('valid ' + api.openapi);
      } catch (err) {
        process.stdout.write('invalid ' + err.message);
      }
    });`;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--no-warnings', '--input-type=module', '-e', script],
      { cwd: process.cwd() },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    child.stdin!.end(JSON.stringify(document));
  });
}

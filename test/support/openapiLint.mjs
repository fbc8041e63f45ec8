// Lints an OpenAPI document read from stdin with two independent tools and prints their findings as one JSON object.
// A separate ESM process: both tools are ES modules, which jest's CommonJS module system cannot load.
import { Validator } from '@seriousme/openapi-schema-validator';
import { createConfig, lintFromString } from '@redocly/openapi-core';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const source = Buffer.concat(chunks).toString('utf8');

const validation = await new Validator().validate(JSON.parse(source));
const config = await createConfig({ extends: ['recommended'] });
const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });

process.stdout.write(
  JSON.stringify({
    validator: { valid: validation.valid, errors: validation.errors ?? [] },
    redocly: problems.map((problem) => ({
      ruleId: problem.ruleId,
      severity: problem.severity,
      message: problem.message,
      pointer: problem.location?.[0]?.pointer,
    })),
  }),
);

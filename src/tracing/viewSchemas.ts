/** Joi descriptions of the tracing answers (src/db/repositories/tracing.ts shapes), for /openapi.json only. */
import Joi from 'joi';

const id = Joi.string().guid();
const timestamp = Joi.string().isoDate();

export const tracingProjectSchema = Joi.object({
  id: id.required(),
  name: Joi.string().required(),
  deployment_id: id.allow(null).required().description('The deployment whose runs it records, if any'),
  created_at: timestamp.required(),
})
  .description('A tracing project')
  .example({
    id: '2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d',
    name: 'support-agent',
    deployment_id: '5f0c7f0e-8d1e-4c6b-9a43-0c1d2e3f4a5b',
    created_at: '2026-11-20T09:30:00.000Z',
  });

export const tracingRunSchema = Joi.object({
  id: id.required(),
  project_id: id.required(),
  thread_id: Joi.string().allow(null).required(),
  assistant_id: Joi.string().allow(null).required(),
  status: Joi.string().required(),
  start_time: timestamp.required(),
  end_time: timestamp.allow(null).required(),
  latency_ms: Joi.number().allow(null).required(),
  error: Joi.string().allow(null).required(),
  inputs: Joi.any().description('The run input as recorded (JSON; text when it was truncated)'),
  outputs: Joi.any().description('The run output as recorded (JSON; text when it was truncated)'),
})
  .description('A run recorded by a deployed app')
  .example({
    id: '7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
    project_id: '2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d',
    thread_id: '1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e',
    assistant_id: 'agent',
    status: 'success',
    start_time: '2026-11-20T10:00:00.000Z',
    end_time: '2026-11-20T10:00:01.250Z',
    latency_ms: 1250,
    error: null,
    inputs: { messages: [{ role: 'user', content: 'Where is my order?' }] },
    outputs: { messages: [{ role: 'assistant', content: 'It ships today.' }] },
  });

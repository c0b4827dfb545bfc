import { factory } from '#lib/http/factory.ts';
import { healthAnswer } from '#lib/http/health.ts';

export const GET = factory.createHandlers((c) => healthAnswer(c, 'healthz'));

/**
 * The JSON Schema of the paid route's request body. The route validates against it (an
 * invalid body is answered 400 before any payment, so a malformed request costs nothing),
 * and the capability publishes it, so buyers and their agents see what to send.
 */
export const summarizeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: {
    text: { type: 'string', minLength: 1, maxLength: 20000, description: 'the text to summarize' },
    maxWords: { type: 'integer', minimum: 1, maximum: 500, default: 30, description: 'the most words the summary may have' },
  },
};

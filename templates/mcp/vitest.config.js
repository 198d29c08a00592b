// This project's own vitest config. Without one, vitest looks in the parent directories and
// would take the first config it finds there (e.g. that of a checkout this project was made in).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.js'],
  },
});

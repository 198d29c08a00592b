import { describe, expect, it } from 'vitest';
import { assertAcceptablePassword, hashPassword, verifyPassword } from '../../src/domain/tenancy/passwords.js';

describe('hashPassword / verifyPassword', () => {
  it('hashes with scrypt, a random salt and the parameters in the string, and verifies', async () => {
    const [a, b] = await Promise.all([hashPassword('correct horse battery'), hashPassword('correct horse battery')]);
    expect(a).toMatch(/^\$scrypt\$ln=\d+,r=\d+,p=\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(a).not.toBe(b); // per-hash salt
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterY', a)).toBe(false);
  });

  it('never matches a malformed or out-of-bounds hash', async () => {
    const h = await hashPassword('correct horse battery');
    expect(await verifyPassword('correct horse battery', 'plain text')).toBe(false);
    expect(await verifyPassword('correct horse battery', h.replace(/ln=\d+/, 'ln=30'))).toBe(false);
  });
});

describe('assertAcceptablePassword', () => {
  it('refuses fewer than 10 characters with VALIDATION_FAILED naming password', () => {
    expect(() => assertAcceptablePassword('123456789')).toThrowError(expect.objectContaining({ code: 'VALIDATION_FAILED', details: expect.objectContaining({ field: 'password' }) }));
    expect(() => assertAcceptablePassword('1234567890')).not.toThrow();
  });
});

/** `agentpay config`: the saved profiles, keys masked. */
import { renderTable } from './output.js';
import { configPath, loadProfiles, maskKey } from './profile.js';

export interface ProfileSummary {
  name: string;
  current: boolean;
  baseUrl: string;
  apiKey: string;
  ca: string | null;
  dataDir: string | null;
}

export interface ConfigView {
  configPath: string;
  current: string | null;
  profiles: ProfileSummary[];
}

export function showConfig(env: NodeJS.ProcessEnv = process.env): ConfigView {
  const file = loadProfiles(env);
  return {
    configPath: configPath(env),
    current: file.current ?? null,
    profiles: Object.entries(file.profiles).map(([name, p]) => ({
      name,
      current: name === file.current,
      baseUrl: p.baseUrl,
      apiKey: maskKey(p.apiKey),
      ca: p.ca ?? null,
      dataDir: p.dataDir ?? null,
    })),
  };
}

export function configText(v: ConfigView): string {
  return [
    `config file: ${v.configPath}`,
    `current profile: ${v.current ?? '(none)'}`,
    '',
    renderTable(v.profiles, [
      { header: '', get: (p) => (p.current ? '*' : ' ') },
      { header: 'NAME', get: (p) => p.name },
      { header: 'GATEWAY', get: (p) => p.baseUrl },
      { header: 'KEY', get: (p) => p.apiKey },
      { header: 'CA', get: (p) => p.ca },
    ], '(no profiles: save one with agentpay login)'),
  ].join('\n');
}

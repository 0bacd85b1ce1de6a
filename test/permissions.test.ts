import { describe, expect, it } from 'vitest';
import { checkPermissionSettings } from '../src/core/schemas.js';
import {
  checkPermission,
  mostRestrictive,
  normalizePath,
  parseRule,
  PERMISSION_MODES,
  rememberRule,
  splitCommand,
  type PermissionMode,
  type PermissionRequest,
  type PermissionSettings,
} from '../src/core/permissions/index.js';

const bash = (command: string): PermissionRequest => ({ tool: 'Bash', arguments: { command }, readOnly: false });
const read = (file_path: string): PermissionRequest => ({ tool: 'Read', arguments: { file_path }, readOnly: true });
const edit = (file_path: string): PermissionRequest => ({
  tool: 'Edit',
  arguments: { file_path, old_string: 'a', new_string: 'b' },
  readOnly: false,
});
const fetchUrl = (url: string): PermissionRequest => ({ tool: 'WebFetch', arguments: { url }, readOnly: true });
const custom = (tool: string, key?: string, extra: Partial<PermissionRequest> = {}): PermissionRequest => ({
  tool,
  arguments: {},
  readOnly: false,
  ...(key !== undefined && { key }),
  ...extra,
});

const project = { cwd: '/home/me/proj', home: '/home/me' };
const decide = (settings: PermissionSettings, request: PermissionRequest, mode?: PermissionMode) =>
  checkPermission({ ...project, ...settings }, request, mode ? { mode } : {}).decision;

describe('mostRestrictive', () => {
  it('orders deny > ask > allow > no opinion', () => {
    expect(mostRestrictive('allow', 'deny')).toBe('deny');
    expect(mostRestrictive('ask', 'allow')).toBe('ask');
    expect(mostRestrictive('deny', 'ask')).toBe('deny');
    expect(mostRestrictive(undefined, 'allow')).toBe('allow');
    expect(mostRestrictive('ask', undefined)).toBe('ask');
    expect(mostRestrictive(undefined, undefined)).toBeUndefined();
  });
});

describe('parseRule', () => {
  it('reads every rule form', () => {
    expect(parseRule('Bash')).toEqual({ text: 'Bash', kind: 'tool', tool: 'Bash' });
    expect(parseRule(' Bash(*) ')).toEqual({ text: 'Bash(*)', kind: 'tool', tool: 'Bash' });
    expect(parseRule('Bash(npm run test:*)')).toMatchObject({ kind: 'command', pattern: 'npm run test:*' });
    expect(parseRule('Read(./src/**)')).toMatchObject({ kind: 'path', tool: 'Read', pattern: './src/**' });
    expect(parseRule('WebFetch(domain:Example.com)')).toMatchObject({ kind: 'domain', domain: 'example.com' });
    expect(parseRule('deploy(staging *)')).toMatchObject({ kind: 'key', tool: 'deploy', pattern: 'staging *' });
    expect(parseRule('mcp__github')).toEqual({ text: 'mcp__github', kind: 'server', server: 'github' });
    expect(parseRule('mcp__github__*')).toEqual({ text: 'mcp__github__*', kind: 'server', server: 'github' });
    expect(parseRule('mcp__github__create_issue')).toMatchObject({ kind: 'tool', tool: 'mcp__github__create_issue' });
  });

  it('names the rule and shows valid forms when it rejects one', () => {
    const cases: [string, RegExp][] = [
      ['', /Invalid permission rule "": it is empty/],
      ['Bash(npm test', /"Bash\(npm test": the specifier must end with "\)"/],
      ['read file', /"read file": a tool name is 1 to 64 letters/],
      ['my*tool', /only allowed as "mcp__server__\*"/],
      ['WebFetch(example.com)', /WebFetch rules take "domain:<host>"/],
      ['WebFetch(domain:https://example.com/x)', /"https:\/\/example.com\/x" is not a host name/],
      ['Read(~bob/.ssh)', /only "~\/..." is supported/],
    ];
    for (const [rule, message] of cases) {
      expect(() => parseRule(rule)).toThrow(message);
      expect(() => parseRule(rule)).toThrow(/Tool\(specifier\), e\.g\. "Bash\(npm run test:\*\)"/);
    }
  });
});

describe('checkPermissionSettings', () => {
  it('returns the settings normalized', () => {
    expect(
      checkPermissionSettings({ mode: 'plan', allow: [' Bash(ls) '], deny: [], cwd: '/work//proj/./src/..', home: '/home/me/' }, 'agent "ops": permissions'),
    ).toEqual({ mode: 'plan', allow: ['Bash(ls)'], deny: [], cwd: '/work/proj', home: '/home/me' });
    expect(checkPermissionSettings({}, 'x')).toEqual({});
  });

  it('says where and what is wrong', () => {
    const where = 'agent "ops": permissions';
    const check = (settings: unknown) => () => checkPermissionSettings(settings, where);
    expect(check(['Bash'])).toThrow(/^agent "ops": permissions: expected an object .* got an array/);
    expect(check({ alow: ['Bash'] })).toThrow(/agent "ops": permissions: unknown key "alow"; the keys are mode, allow, ask, deny, cwd, home/);
    expect(check({ mode: 'yolo' })).toThrow(/mode must be one of default, acceptEdits, plan, dontAsk, bypassPermissions, got "yolo"/);
    expect(check({ allow: 'Bash' })).toThrow(/allow must be an array of rule strings, got "Bash"/);
    expect(check({ deny: ['Bash', 3] })).toThrow(/deny\[1\] must be a rule string, got number 3/);
    expect(check({ ask: ['Bash', 'Bash(rm'] })).toThrow(/agent "ops": permissions: ask\[1\]: Invalid permission rule "Bash\(rm"/);
    expect(check({ cwd: 'proj' })).toThrow(/cwd must be an absolute POSIX path such as "\/home\/me\/project", got "proj"/);
    expect(check({ home: 7 })).toThrow(/home must be an absolute POSIX path/);
  });

  it('knows the modes', () => {
    expect(PERMISSION_MODES).toEqual(['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions']);
  });
});

describe('Bash rules', () => {
  it('a bare name or (*) matches every command', () => {
    expect(decide({ allow: ['Bash'] }, bash('rm -rf build'))).toBe('allow');
    expect(decide({ allow: ['Bash(*)'] }, bash('anything at all'))).toBe('allow');
  });

  it('an exact rule matches that command only', () => {
    expect(decide({ allow: ['Bash(ls)'] }, bash('ls'))).toBe('allow');
    expect(decide({ allow: ['Bash(ls)'] }, bash('ls -la'))).toBeUndefined();
  });

  it('the legacy :* form is a prefix ending at a word boundary', () => {
    const settings = { allow: ['Bash(npm run test:*)'] };
    expect(decide(settings, bash('npm run test'))).toBe('allow');
    expect(decide(settings, bash('npm run test -- --watch'))).toBe('allow');
    expect(decide(settings, bash('npm run testing'))).toBeUndefined();
    expect(decide(settings, bash('npm run build'))).toBeUndefined();
  });

  it('* matches any characters anywhere; a space before it is a word boundary', () => {
    expect(decide({ allow: ['Bash(git *)'] }, bash('git status --short'))).toBe('allow');
    expect(decide({ allow: ['Bash(git *)'] }, bash('git'))).toBe('allow');
    expect(decide({ allow: ['Bash(git *)'] }, bash('gitk'))).toBeUndefined();
    expect(decide({ allow: ['Bash(ls*)'] }, bash('lsof -i'))).toBe('allow');
    expect(decide({ allow: ['Bash(git * main)'] }, bash('git merge main'))).toBe('allow');
    expect(decide({ allow: ['Bash(git * main)'] }, bash('git merge dev'))).toBeUndefined();
    expect(decide({ allow: ['Bash(* --version)'] }, bash('node --version'))).toBe('allow');
  });

  it('\\* in a rule is a literal star', () => {
    expect(decide({ allow: ['Bash(ls \\*.ts)'] }, bash('ls *.ts'))).toBe('allow');
    expect(decide({ allow: ['Bash(ls \\*.ts)'] }, bash('ls a.ts'))).toBeUndefined();
  });
});

describe('compound commands', () => {
  it('are split on shell operators, outside quotes', () => {
    expect(splitCommand('git add . && npm test || echo failed; ls | wc -l & sleep 1\necho done')).toEqual([
      'git add .',
      'npm test',
      'echo failed',
      'ls',
      'wc -l',
      'sleep 1',
      'echo done',
    ]);
    expect(splitCommand(`echo "a && b" 'c; d' | grep a`)).toEqual([`echo "a && b" 'c; d'`, 'grep a']);
    expect(splitCommand('npm test 2>&1 &> out.log')).toEqual(['npm test 2>&1 &> out.log']);
    expect(splitCommand(' ;; && ')).toEqual([]);
  });

  it('are allowed only when every part is allowed', () => {
    const settings = { allow: ['Bash(git *)', 'Bash(npm test)'] };
    const both = checkPermission({ ...project, ...settings }, bash('git add . && npm test'));
    expect(both).toEqual({
      decision: 'allow',
      reason: 'allow rule "Bash(git *)" and allow rule "Bash(npm test)"',
      rule: 'Bash(git *)',
    });
    expect(decide(settings, bash('git status && rm -rf /'))).toBeUndefined();
    // `sh` reads its commands from the pipe: no allow rule vouches for what it cannot see.
    expect(decide(settings, bash('git log | sh'))).toBe('ask');
  });

  it('keep a quoted && inside one part', () => {
    const settings = { allow: ['Bash(echo *)'] };
    expect(decide(settings, bash('echo "a && rm -rf /"'))).toBe('allow');
    expect(decide(settings, bash('echo a && rm -rf /'))).toBeUndefined();
  });

  it('are denied, or asked about, when any part matches', () => {
    const settings = { allow: ['Bash'], deny: ['Bash(rm *)'], ask: ['Bash(git push:*)'] };
    expect(checkPermission({ ...project, ...settings }, bash('ls; rm -rf /'))).toEqual({
      decision: 'deny',
      reason: 'deny rule "Bash(rm *)"',
      rule: 'Bash(rm *)',
    });
    expect(decide(settings, bash('git commit -m x && git push origin main'))).toBe('ask');
    expect(decide(settings, bash('echo "rm -rf /"'))).toBe('allow');
  });

  it('with a command substitution need the commands inside allowed too, or an exact rule', () => {
    const settings = { allow: ['Bash(echo *)'] };
    expect(decide(settings, bash('echo $(rm -rf ~)'))).toBeUndefined();
    expect(decide(settings, bash('echo `curl evil.sh`'))).toBeUndefined();
    expect(decide({ allow: ['Bash(echo $(date))'] }, bash('echo $(date)'))).toBe('allow');
    expect(decide({ allow: ['Bash(echo *)', 'Bash(date *)'] }, bash('echo "today: $(date +%F)"'))).toBe('allow');
  });
});

describe('path rules', () => {
  it('./x and x are relative to cwd; * stays within a segment, ** goes any depth', () => {
    expect(decide({ allow: ['Read(./src/**)'] }, read('src/a/b.ts'))).toBe('allow');
    expect(decide({ allow: ['Read(src/**)'] }, read('/home/me/proj/src/a.ts'))).toBe('allow');
    expect(decide({ allow: ['Read(./src/*.ts)'] }, read('./src/a.ts'))).toBe('allow');
    expect(decide({ allow: ['Read(./src/*.ts)'] }, read('./src/deep/a.ts'))).toBeUndefined();
    expect(decide({ allow: ['Read(./src/**)'] }, read('docs/a.md'))).toBeUndefined();
  });

  it('judge a path escaping with .. where it really points', () => {
    const settings = { allow: ['Read(./src/**)'], deny: ['Read(//etc/**)'] };
    expect(decide({ allow: ['Read(./src/**)'] }, read('./src/../../secret.txt'))).toBeUndefined();
    expect(decide({ allow: ['Read(./src/**)'] }, read('/home/me/proj/src/../../../../etc/passwd'))).toBeUndefined();
    expect(checkPermission({ ...project, ...settings }, read('./src/../../../../etc/passwd'))).toEqual({
      decision: 'deny',
      reason: 'deny rule "Read(//etc/**)"',
      rule: 'Read(//etc/**)',
    });
    expect(decide({ allow: ['Read(./src/**)'] }, read('./src/./lib//a.ts'))).toBe('allow');
  });

  it('//x is absolute, ~/x is home, /x is the project root (cwd)', () => {
    expect(decide({ deny: ['Read(//etc/**)'] }, read('/etc/hosts'))).toBe('deny');
    expect(decide({ deny: ['Read(~/.ssh/**)'] }, read('/home/me/.ssh/id_rsa'))).toBe('deny');
    expect(decide({ deny: ['Read(~/.ssh/**)'] }, read('~/.ssh/id_rsa'))).toBe('deny');
    expect(decide({ deny: ['Read(~/.ssh/**)'] }, read('/home/me/proj/.ssh/x'))).toBeUndefined();
    expect(decide({ allow: ['Edit(/src/**/*.ts)'] }, edit('src/a/b.ts'))).toBe('allow');
    expect(decide({ allow: ['Edit(/src/**/*.ts)'] }, edit('src/a.ts'))).toBe('allow');
    expect(decide({ allow: ['Edit(/src/**/*.ts)'] }, edit('/src/a.ts'))).toBeUndefined();
    expect(decide({ allow: ['Edit(/src/**/*.ts)'] }, edit('src/a.js'))).toBeUndefined();
  });

  it('~/ rules never match without a home', () => {
    const settings = { cwd: '/home/me/proj', deny: ['Read(~/.ssh/**)'], allow: ['Read(./**)'] };
    expect(checkPermission(settings, read('/home/me/.ssh/id_rsa')).decision).toBeUndefined();
    // A ~ path cannot be placed without a home, so no path rule allows it either.
    expect(checkPermission(settings, read('~/.ssh/id_rsa')).decision).toBeUndefined();
  });

  it('a name without a slash matches at any depth, as in gitignore; ./name only in cwd', () => {
    expect(decide({ deny: ['Read(.env)'] }, read('config/.env'))).toBe('deny');
    expect(decide({ deny: ['Read(*.pem)'] }, read('a/b/key.pem'))).toBe('deny');
    expect(decide({ deny: ['Read(./.env)'] }, read('.env'))).toBe('deny');
    expect(decide({ deny: ['Read(./.env)'] }, read('config/.env'))).toBeUndefined();
    expect(decide({ deny: ['Read(.env)'] }, read('/elsewhere/.env'))).toBeUndefined();
  });

  it('a pattern naming a directory covers what is inside', () => {
    expect(decide({ deny: ['Read(//etc)'] }, read('/etc/passwd'))).toBe('deny');
    expect(decide({ allow: ['Read(./src/**)'] }, { tool: 'Grep', arguments: { pattern: 'x', path: 'src' }, readOnly: true })).toBe('allow');
  });

  it('Edit rules cover every file-editing tool; Read rules cover Glob and Grep', () => {
    const settings = { allow: ['Edit(./src/**)', 'Read(./**)'] };
    expect(decide(settings, { tool: 'Write', arguments: { file_path: 'src/new.ts', content: '' }, readOnly: false })).toBe('allow');
    expect(decide(settings, { tool: 'MultiEdit', arguments: { file_path: 'src/a.ts', edits: [] }, readOnly: false })).toBe('allow');
    expect(decide(settings, { tool: 'NotebookEdit', arguments: { notebook_path: 'src/n.ipynb' }, readOnly: false })).toBe('allow');
    expect(decide(settings, { tool: 'Write', arguments: { file_path: 'docs/x.md' }, readOnly: false })).toBeUndefined();
    // Glob and Grep search cwd when given no path.
    expect(decide(settings, { tool: 'Glob', arguments: { pattern: '**/*.ts' }, readOnly: true })).toBe('allow');
    expect(decide(settings, { tool: 'Grep', arguments: { pattern: 'x', path: '/etc' }, readOnly: true })).toBeUndefined();
    expect(decide({ deny: ['Read'] }, { tool: 'Grep', arguments: { pattern: 'x' }, readOnly: true })).toBe('deny');
    expect(decide({ allow: ['Edit'] }, { tool: 'Write', arguments: { file_path: '/etc/x' }, readOnly: false })).toBe('allow');
  });

  it('a Write(...) rule is about Write calls only', () => {
    expect(decide({ deny: ['Write(./src/**)'] }, { tool: 'Write', arguments: { file_path: 'src/a.ts' }, readOnly: false })).toBe('deny');
    expect(decide({ deny: ['Write(./src/**)'] }, edit('src/a.ts'))).toBeUndefined();
  });
});

describe('WebFetch rules', () => {
  it('match the URL host, or any subdomain with *.', () => {
    expect(decide({ allow: ['WebFetch(domain:example.com)'] }, fetchUrl('https://example.com/docs?q=1'))).toBe('allow');
    expect(decide({ allow: ['WebFetch(domain:example.com)'] }, fetchUrl('https://EXAMPLE.com:8443/'))).toBe('allow');
    expect(decide({ allow: ['WebFetch(domain:example.com)'] }, fetchUrl('https://docs.example.com/'))).toBeUndefined();
    expect(decide({ allow: ['WebFetch(domain:*.example.com)'] }, fetchUrl('https://docs.example.com/'))).toBe('allow');
    expect(decide({ allow: ['WebFetch(domain:*.example.com)'] }, fetchUrl('https://a.b.example.com/'))).toBe('allow');
    expect(decide({ allow: ['WebFetch(domain:*.example.com)'] }, fetchUrl('https://example.com/'))).toBeUndefined();
    expect(decide({ allow: ['WebFetch(domain:*.example.com)'] }, fetchUrl('https://badexample.com/'))).toBeUndefined();
  });

  it('read the host as fetch does, and never allow an unparseable URL', () => {
    const settings = { allow: ['WebFetch(domain:example.com)'] };
    expect(decide(settings, fetchUrl('https://example.com@evil.com/'))).toBeUndefined();
    expect(decide(settings, fetchUrl('https://evil.com\\@example.com/'))).toBeUndefined();
    expect(decide(settings, fetchUrl('https://example.com.evil.net/'))).toBeUndefined();
    expect(decide(settings, fetchUrl('example.com'))).toBeUndefined();
    expect(decide(settings, { tool: 'WebFetch', arguments: {}, readOnly: true })).toBeUndefined();
    expect(decide({ deny: ['WebFetch'] }, fetchUrl('::nonsense::'))).toBe('deny');
  });
});

describe('MCP rules', () => {
  const call = (tool: string): PermissionRequest => ({ tool, arguments: {}, readOnly: false });
  it('name one tool, or every tool of a server', () => {
    expect(decide({ allow: ['mcp__github'] }, call('mcp__github__create_issue'))).toBe('allow');
    expect(decide({ allow: ['mcp__github__*'] }, call('mcp__github__list_prs'))).toBe('allow');
    expect(decide({ allow: ['mcp__github'] }, call('mcp__githubx__create_issue'))).toBeUndefined();
    expect(decide({ allow: ['mcp__github'] }, call('mcp__gitlab__create_issue'))).toBeUndefined();
    expect(decide({ allow: ['mcp__github__create_issue'] }, call('mcp__github__create_issue'))).toBe('allow');
    expect(decide({ allow: ['mcp__github__create_issue'] }, call('mcp__github__delete_repo'))).toBeUndefined();
  });
});

describe('custom tools', () => {
  it('match their key like a Bash command, without splitting it', () => {
    expect(decide({ allow: ['deploy(staging *)'] }, custom('deploy', 'staging eu-west'))).toBe('allow');
    expect(decide({ allow: ['deploy(staging *)'] }, custom('deploy', 'production'))).toBeUndefined();
    expect(decide({ allow: ['deploy(prod:*)'] }, custom('deploy', 'prod us'))).toBe('allow');
    expect(decide({ allow: ['deploy(prod:*)'] }, custom('deploy', 'products'))).toBeUndefined();
    expect(decide({ allow: ['deploy(staging)'] }, custom('deploy', 'staging'))).toBe('allow');
    expect(decide({ allow: ['note(add *)'] }, custom('note', 'add x && rm -rf /'))).toBe('allow');
  });

  it('without a key match only bare-name rules', () => {
    expect(decide({ allow: ['deploy(*)'] }, custom('deploy'))).toBe('allow');
    expect(decide({ allow: ['deploy'] }, custom('deploy'))).toBe('allow');
    expect(decide({ allow: ['deploy(staging)'] }, custom('deploy'))).toBeUndefined();
    expect(decide({ allow: ['deploy'] }, custom('deployer'))).toBeUndefined();
  });
});

describe('precedence', () => {
  it('is deny > ask > allow, whatever the order or specificity', () => {
    expect(decide({ allow: ['Bash(aws s3 ls)'], deny: ['Bash(aws *)'] }, bash('aws s3 ls'))).toBe('deny');
    expect(decide({ allow: ['Bash(git push origin main)'], ask: ['Bash(git push *)'] }, bash('git push origin main'))).toBe('ask');
    expect(decide({ ask: ['Bash'], deny: ['Bash(rm *)'] }, bash('rm x'))).toBe('deny');
    expect(checkPermission({ allow: ['Bash'], ask: ['Bash(npm *)'] }, bash('npm publish'))).toEqual({
      decision: 'ask',
      reason: 'ask rule "Bash(npm *)"',
      rule: 'Bash(npm *)',
    });
  });
});

describe('modes', () => {
  it('default: rules only, no opinion without one', () => {
    expect(checkPermission(project, bash('ls'))).toEqual({ decision: undefined });
    expect(checkPermission(project, read('a.ts'))).toEqual({ decision: undefined });
  });

  it('the run mode overrides the settings mode', () => {
    const settings = { ...project, mode: 'bypassPermissions' as const };
    expect(checkPermission(settings, bash('ls')).decision).toBe('allow');
    expect(checkPermission(settings, bash('ls'), { mode: 'default' }).decision).toBeUndefined();
  });

  it('acceptEdits allows file edits inside cwd, unless a deny or ask rule matches', () => {
    expect(checkPermission(project, edit('src/a.ts'), { mode: 'acceptEdits' })).toEqual({
      decision: 'allow',
      reason: 'mode acceptEdits: file edits inside the working directory are allowed',
    });
    expect(decide({}, { tool: 'Write', arguments: { file_path: 'b.ts' }, readOnly: false }, 'acceptEdits')).toBe('allow');
    expect(decide({}, edit('/etc/hosts'), 'acceptEdits')).toBeUndefined();
    expect(decide({}, edit('src/../../outside.ts'), 'acceptEdits')).toBeUndefined();
    expect(decide({}, custom('save_report', undefined, { editsFiles: true }), 'acceptEdits')).toBe('allow');
    expect(decide({}, bash('mkdir x'), 'acceptEdits')).toBeUndefined();
    expect(decide({ deny: ['Edit(./secrets/**)'] }, edit('secrets/k'), 'acceptEdits')).toBe('deny');
    expect(decide({ ask: ['Edit(./package.json)'] }, edit('package.json'), 'acceptEdits')).toBe('ask');
  });

  it('plan denies every tool that is not read-only; read-only ones follow the rules', () => {
    const verdict = checkPermission({ ...project, allow: ['Bash', 'Edit'] }, bash('ls'), { mode: 'plan' });
    expect(verdict.decision).toBe('deny');
    expect(verdict.reason).toBe('mode plan: only read-only tools may run, and "Bash" is not read-only');
    expect(decide({ ask: ['Edit'] }, edit('a.ts'), 'plan')).toBe('deny');
    expect(decide({ allow: ['Read'] }, read('a.ts'), 'plan')).toBe('allow');
    expect(decide({ ask: ['Read(./.env)'] }, read('.env'), 'plan')).toBe('ask');
    expect(decide({}, read('a.ts'), 'plan')).toBeUndefined();
    expect(checkPermission({ deny: ['Bash'] }, bash('ls'), { mode: 'plan' }).reason).toBe('deny rule "Bash"');
  });

  it('dontAsk turns an ask, from a rule or an earlier stage, into a deny', () => {
    const fromRule = checkPermission({ ...project, ask: ['Bash(git push:*)'] }, bash('git push'), { mode: 'dontAsk' });
    expect(fromRule).toEqual({
      decision: 'deny',
      reason: 'mode dontAsk: ask rule "Bash(git push:*)" would ask; dontAsk turned the ask into a deny',
      rule: 'Bash(git push:*)',
    });
    const fromStage = checkPermission({ ...project, allow: ['Bash'] }, bash('ls'), { mode: 'dontAsk', soFar: 'ask' });
    expect(fromStage).toEqual({
      decision: 'deny',
      reason: 'mode dontAsk: an earlier stage asked for approval; dontAsk turned the ask into a deny',
    });
    expect(checkPermission(project, bash('ls'), { mode: 'dontAsk', soFar: 'ask' }).decision).toBe('deny');
    expect(decide({ allow: ['Bash'] }, bash('ls'), 'dontAsk')).toBe('allow');
    expect(checkPermission({ allow: ['Bash'] }, bash('ls'), { mode: 'dontAsk', soFar: 'allow' }).decision).toBe('allow');
    expect(checkPermission(project, bash('ls'), { mode: 'dontAsk' }).decision).toBeUndefined();
    // Outside dontAsk the caller combines with soFar itself.
    expect(checkPermission({ allow: ['Bash'] }, bash('ls'), { soFar: 'ask' }).decision).toBe('allow');
  });

  it('bypassPermissions allows everything but what deny rules deny and ask rules ask', () => {
    expect(checkPermission(project, bash('rm -rf build'), { mode: 'bypassPermissions' })).toEqual({
      decision: 'allow',
      reason: 'mode bypassPermissions: every call no deny or ask rule matches is allowed',
    });
    expect(decide({}, edit('/etc/hosts'), 'bypassPermissions')).toBe('allow');
    expect(decide({ deny: ['Bash(rm *)'] }, bash('rm -rf /'), 'bypassPermissions')).toBe('deny');
    expect(decide({ ask: ['Bash(git push:*)'] }, bash('git push'), 'bypassPermissions')).toBe('ask');
  });
});

describe('remembered rules', () => {
  it('rememberRule names this call exactly', () => {
    expect(rememberRule(bash('  npm run test  '))).toBe('Bash(npm run test)');
    expect(rememberRule(bash('ls *.ts'))).toBe('Bash(ls \\*.ts)');
    expect(rememberRule(read('/etc//ssl/../hosts'))).toBe('Read(//etc/hosts)');
    expect(rememberRule(edit('./src/../lib/a.ts'))).toBe('Edit(./lib/a.ts)');
    expect(rememberRule(edit('../other/a.ts'))).toBe('Edit(./../other/a.ts)');
    expect(rememberRule(read('~/.zshrc'))).toBe('Read(~/.zshrc)');
    expect(rememberRule({ tool: 'Glob', arguments: { pattern: '*.ts' }, readOnly: true })).toBe('Glob(./)');
    expect(rememberRule(fetchUrl('https://Docs.Example.com/a?b'))).toBe('WebFetch(domain:docs.example.com)');
    expect(rememberRule(custom('deploy', 'staging'))).toBe('deploy(staging)');
    expect(rememberRule(custom('deploy'))).toBe('deploy');
    expect(rememberRule(custom('mcp__github__create_issue'))).toBe('mcp__github__create_issue');
    expect(rememberRule({ tool: 'Bash', arguments: {}, readOnly: false })).toBe('Bash()');
  });

  it('every remembered rule is valid, and allows the call again but no wider', () => {
    const again = (request: PermissionRequest, other: PermissionRequest) => {
      const remembered = [rememberRule(request)];
      expect(() => parseRule(remembered[0]!)).not.toThrow();
      const verdict = checkPermission(project, request, { remembered });
      expect(verdict.decision).toBe('allow');
      expect(verdict.reason).toBe(`remembered allow rule "${remembered[0]}"`);
      expect(checkPermission(project, other, { remembered }).decision).toBeUndefined();
    };
    again(bash('npm run test'), bash('npm run test && curl evil.sh'));
    again(bash('ls *.ts'), bash('ls secret.ts'));
    again(bash('git add . && git commit -m "wip"'), bash('git add . && git commit -m "wip" && git push'));
    again(bash('echo $(date)'), bash('echo $(whoami)'));
    again(edit('src/a.ts'), edit('src/b.ts'));
    again(edit('../other/a.ts'), edit('../other/b.ts'));
    again(read('~/.zshrc'), read('~/.bashrc'));
    again(read('/etc/hosts'), read('/etc/passwd'));
    // Glob characters in a path are escaped: the rule names that file only.
    again(read('./a[1]/b{c,d}?.ts'), read('./a1/bc?.ts'));
    again(edit('src/*.ts'), edit('src/a.ts'));
    // A line the parser cannot see all of is allowed again by its exact rule only; another asks.
    const agent = [rememberRule(bash('eval "$(ssh-agent -s)"'))];
    expect(checkPermission(project, bash('eval "$(ssh-agent -s)"'), { remembered: agent }).decision).toBe('allow');
    expect(checkPermission(project, bash('eval "$(ssh-agent -k)"'), { remembered: agent }).decision).toBe('ask');
    again(fetchUrl('https://example.com/a'), fetchUrl('https://docs.example.com/a'));
    again(custom('deploy', 'stag*ing'), custom('deploy', 'stag-x-ing'));
    again({ tool: 'Bash', arguments: {}, readOnly: false }, bash('ls'));
  });

  it('still yield to deny and ask rules', () => {
    const remembered = [rememberRule(bash('rm -rf build'))];
    expect(checkPermission({ deny: ['Bash(rm *)'] }, bash('rm -rf build'), { remembered }).decision).toBe('deny');
    expect(checkPermission({ ask: ['Bash'] }, bash('rm -rf build'), { remembered }).decision).toBe('ask');
  });
});

describe('normalizePath', () => {
  it('resolves . and .., never above the root, and collapses //', () => {
    expect(normalizePath('/a/./b//c/../d/')).toBe('/a/b/d');
    expect(normalizePath('/../../etc/passwd')).toBe('/etc/passwd');
    expect(normalizePath('/')).toBe('/');
  });
});

import * as ed from '@noble/ed25519';
import crypto from 'node:crypto';
const hex = (b) => Buffer.from(b).toString('hex');
const long = `08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed185ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f27088d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b0707e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128bab27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429ec96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb751fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34dff7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e488acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a32ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5fb93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380db2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0`;
const m = Buffer.from(long, 'hex');
console.log('len', m.length);
const PK = Buffer.from('302e020100300506032b657004220420', 'hex');
const SP = Buffer.from('302a300506032b6570032100', 'hex');
const seed = Buffer.from('f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5','hex');
const priv = crypto.createPrivateKey({key: Buffer.concat([PK, seed]), format:'der', type:'pkcs8'});
console.log(hex(crypto.createPublicKey(priv).export({type:'spki',format:'der'}).subarray(12)));
console.log(hex(crypto.sign(null, m, priv)));
const abc = crypto.createHash('sha512').update('abc').digest('hex'); console.log('sha abc', abc);
// small order via noble
const L = 2n**252n + 27742317777372353535851937790883648493n;
let P = ed.Point.BASE.multiply(12345n);
// find a point with torsion: decode random y until valid, then multiply by L
let T;
for (let i=2;;i++){ const b = new Uint8Array(32); b[0]=i; try { const Q = ed.Point.fromBytes(b); const t = Q.multiply ? Q.multiplyUnsafe(L) : null; if (!t.is0() && !t.double().is0() && !t.double().double().is0()) { T = t; break; } } catch {} }
const pts = []; let X = ed.Point.ZERO; for (let i=0;i<8;i++){ pts.push(X); X = X.add(T); }
const encs = pts.map(p=>hex(p.toBytes()));
console.log(encs);
const cleared = [...new Set(encs.map(e => { const b = Buffer.from(e,'hex'); b[31]&=0x7f; return hex(b); }))];
console.log('canonical cleared', cleared.sort());
// noncanonical y >= p that decode (zip215)
const p = 2n**255n-19n;
for (let y = p; y < 2n**255n; y++) { const b = Buffer.alloc(32); let v=y; for (let i=0;i<32;i++){b[i]=Number(v&255n); v>>=8n;} try { const Q = ed.Point.fromBytes(b, true); console.log('noncanon', hex(b), 'small', Q.isSmallOrder()); } catch {} }

"""Stand-in accounts: who an auth key logs in as, and the server half of two-step verification (SRP)."""

from __future__ import annotations

import functools
import hashlib
import secrets
from dataclasses import dataclass, field

from telethon import password as pwd
from telethon.crypto import AuthKey
from telethon.tl import TLObject, types


# -- two-step verification: the server half of Telegram's SRP (https://core.telegram.org/api/srp) ------

SRP_G = 3
SRP_P = bytes.fromhex(  # the 2048-bit safe prime Telethon's password.check_prime_and_good knows as good
    "C71CAEB9C6B1C9048E6C522F70F13F73980D40238E3E21C14934D037563D930F"
    "48198A0AA7C14058229493D22530F4DBFA336F6E0AC925139543AED44CCE7C37"
    "20FD51F69458705AC68CD4FE6B6B13ABDC9746512969328454F18FAF8C595F64"
    "2477FE96BB2A941D5BCD1D4AC8CC49880708FA9B378E3C4F3A9060BEE67CF9A4"
    "A4A695811051907E162753B56B0F6B410DBA74D8A84B2A14B3144E0EF1284754"
    "FD17ED950D5965B4B9DD46582DB1178D169C6BC465B0D6FF9CA3928FEF5B9AE4"
    "E418FC15E83EBEA0F87FA9FF5EED70050DED2849F47BF959D956850CE929851F"
    "0D8115F635B105EE2E4E15D04B2454BF6F4FADF034B10403119CD8E3B92FCC5B")
_P = int.from_bytes(SRP_P, "big")
_K = int.from_bytes(pwd.sha256(SRP_P, pwd.big_num_for_hash(SRP_G)), "big")  # k = H(p | g)


@functools.lru_cache(maxsize=16)
def srp_verifier(salt1: bytes, salt2: bytes, password: str) -> int:
    """v = g^x mod p with x = PH2(password, salt1, salt2): what Telegram stores instead of the password."""
    algo = types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(salt1, salt2, SRP_G, SRP_P)
    return pow(SRP_G, int.from_bytes(pwd.compute_hash(algo, password), "big"), _P)


def srp_challenge(v: int) -> tuple[int, bytes]:
    """A fresh secret b and the public B = (k*v + g^b) mod p (``srp_B``); b is redrawn until g^b passes
    the size check Telethon's ``compute_check`` applies to it."""
    while True:
        b = secrets.randbits(2048) % _P
        g_b = pow(SRP_G, b, _P)
        if pwd.is_good_mod_exp_first(g_b, _P):
            return b, pwd.big_num_for_hash((_K * v + g_b) % _P)


def srp_expected_m1(algo: TLObject, v: int, b: int, a_bytes: bytes) -> bytes | None:
    """The M1 a client knowing the password sends for this A (None for an A outside the range clients draw from).

    u = H(A | B), S = (A * v^u)^b mod p, K = H(S), M1 = H(H(p) xor H(g) | H(salt1) | H(salt2) | A | B | K).
    """
    a = int.from_bytes(a_bytes, "big")
    if len(a_bytes) != pwd.SIZE_FOR_HASH or not pwd.is_good_mod_exp_first(a, _P):
        return None
    a_for_hash = pwd.big_num_for_hash(a)
    b_for_hash = pwd.big_num_for_hash((_K * v + pow(SRP_G, b, _P)) % _P)
    u = int.from_bytes(pwd.sha256(a_for_hash, b_for_hash), "big")
    s = pow(a * pow(v, u, _P) % _P, b, _P)
    k_session = pwd.sha256(pwd.big_num_for_hash(s))
    p_for_hash, g_for_hash = pwd.num_bytes_for_hash(SRP_P), pwd.big_num_for_hash(SRP_G)
    return pwd.sha256(pwd.xor(pwd.sha256(p_for_hash), pwd.sha256(g_for_hash)), pwd.sha256(algo.salt1),
                      pwd.sha256(algo.salt2), a_for_hash, b_for_hash, k_session)


@dataclass
class Account:
    """An authorized user behind one credential name."""

    name: str
    user_id: int
    access_hash: int
    revoked: bool = False
    authorized: bool = True
    phone: str = "+989120000000"
    code: str = "12345"
    password: str | None = None  # two-step verification: SignIn then needs CheckPassword (SRP)
    awaiting_password: bool = False  # the code was right, the 2FA password is still owed
    srp_pending: dict[int, int] = field(default_factory=dict, repr=False)  # srp_id -> the server's secret b

    def srp_algo(self) -> types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow:
        """The account's KDF parameters (salts fixed per account, as Telegram keeps them per password)."""
        salt = hashlib.sha256(f"standin-2fa:{self.name}".encode()).digest()
        return types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(
            salt1=salt[:16], salt2=salt[16:], g=SRP_G, p=SRP_P)

    def tl(self) -> types.User:
        return types.User(id=self.user_id, is_self=True, access_hash=self.access_hash, first_name=f"crawler {self.name}")


_KEY_MARK = b"standin-account:"


def account_key(name: str) -> AuthKey:
    """The auth key of the stand-in account ``name``: as on Telegram, the key a client presents says who it is."""
    return AuthKey((_KEY_MARK + name.encode()).ljust(256, b"\0"))

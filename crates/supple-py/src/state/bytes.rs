//! A saved state as bytes (what `pickle` and `bytes(state)` hold): `SUPPLEST`, a `u32`
//! version, then the time, step count, bodies and record, every number little-endian and
//! every float as its bits (a round trip is exact). A hand-written format because it is
//! small and the state must come back bit for bit; readers refuse other versions.

use super::{Command, Log, Saved};
use crate::constrain::ConstrainArgs;
use supple::nalgebra::Vector3;

const MAGIC: &[u8; 8] = b"SUPPLEST";
const VERSION: u32 = 1;

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
    fn vec3(&mut self, v: &Vector3<f64>) {
        v.iter().for_each(|&c| self.f64(c));
    }
    fn arr<const N: usize>(&mut self, v: &[f64; N]) {
        v.iter().for_each(|&c| self.f64(c));
    }
    fn vecs(&mut self, v: &[Vector3<f64>]) {
        self.len(v.len());
        v.iter().for_each(|p| self.vec3(p));
    }
    fn u32s(&mut self, v: &[u32]) {
        self.len(v.len());
        v.iter().for_each(|&i| self.u32(i));
    }
    fn f64s(&mut self, v: &[f64]) {
        self.len(v.len());
        v.iter().for_each(|&c| self.f64(c));
    }
    fn opt<T>(&mut self, v: &Option<T>, put: impl FnOnce(&mut Self, &T)) {
        match v {
            None => self.u8(0),
            Some(t) => {
                self.u8(1);
                put(self, t);
            }
        }
    }
}

struct In<'a> {
    b: &'a [u8],
    at: usize,
}

type R<T> = Result<T, String>;

impl In<'_> {
    fn take(&mut self, n: usize) -> R<&[u8]> {
        let end = (self.at.checked_add(n))
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| format!("ends early (byte {} of {})", self.at, self.b.len()))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> R<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> R<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn f64(&mut self) -> R<f64> {
        self.u64().map(f64::from_bits)
    }
    /// A length, checked against what is left (`item` bytes each) before anything is
    /// allocated for it.
    fn len(&mut self, item: usize) -> R<usize> {
        let n = self.u64()?;
        let left = (self.b.len() - self.at) as u64;
        if n.saturating_mul(item as u64) > left {
            return Err(format!(
                "ends early (a length of {n} at byte {} runs past the end)",
                self.at
            ));
        }
        Ok(n as usize)
    }
    fn str(&mut self) -> R<String> {
        let n = self.len(1)?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "a name is not UTF-8".into())
    }
    fn vec3(&mut self) -> R<Vector3<f64>> {
        Ok(Vector3::new(self.f64()?, self.f64()?, self.f64()?))
    }
    fn arr<const N: usize>(&mut self) -> R<[f64; N]> {
        let mut a = [0.0; N];
        for c in &mut a {
            *c = self.f64()?;
        }
        Ok(a)
    }
    fn vecs(&mut self) -> R<Vec<Vector3<f64>>> {
        let n = self.len(24)?;
        (0..n).map(|_| self.vec3()).collect()
    }
    fn u32s(&mut self) -> R<Vec<u32>> {
        let n = self.len(4)?;
        (0..n).map(|_| self.u32()).collect()
    }
    fn f64s(&mut self) -> R<Vec<f64>> {
        let n = self.len(8)?;
        (0..n).map(|_| self.f64()).collect()
    }
    fn opt<T>(&mut self, get: impl FnOnce(&mut Self) -> R<T>) -> R<Option<T>> {
        match self.u8()? {
            0 => Ok(None),
            1 => get(self).map(Some),
            t => Err(format!("byte {}: {t} is not an option tag", self.at - 1)),
        }
    }
}

impl Saved {
    /// The state as bytes (see the module doc).
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out::default();
        o.0.extend_from_slice(MAGIC);
        o.u32(VERSION);
        o.f64(self.time);
        o.u64(self.steps);
        o.len(self.bodies.len());
        for (name, x, v) in &self.bodies {
            o.str(name);
            o.vecs(x);
            o.vecs(v);
        }
        o.len(self.log.0.len());
        for c in &self.log.0 {
            command(&mut o, c);
        }
        o.0
    }

    /// Reads what [`Saved::encode`] wrote; `Err` says what is wrong with the bytes.
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        let mut i = In { b, at: 0 };
        if i.take(8).ok() != Some(MAGIC.as_slice()) {
            return Err("not a supple state (no SUPPLEST header)".into());
        }
        let version = i.u32()?;
        if version != VERSION {
            return Err(format!(
                "state format version {version}, this supple reads version {VERSION}"
            ));
        }
        let time = i.f64()?;
        let steps = i.u64()?;
        let n = i.len(8)?;
        let bodies = (0..n)
            .map(|_| Ok((i.str()?, i.vecs()?, i.vecs()?)))
            .collect::<R<_>>()?;
        let n = i.len(1)?;
        let log = (0..n).map(|_| read_command(&mut i)).collect::<R<_>>()?;
        if i.at != b.len() {
            return Err(format!(
                "{} bytes left over after the state",
                b.len() - i.at
            ));
        }
        Ok(Self {
            log: Log(log),
            time,
            steps,
            bodies,
        })
    }
}

fn command(o: &mut Out, c: &Command) {
    match c {
        Command::Steps { n, failed } => {
            o.u8(0);
            o.u64(*n);
            o.u8(u8::from(*failed));
        }
        Command::Positions { body, x } => {
            o.u8(1);
            o.u32(*body);
            o.vecs(x);
        }
        Command::Velocities { body, v } => {
            o.u8(2);
            o.u32(*body);
            o.vecs(v);
        }
        Command::Forces {
            body,
            vertices,
            forces,
        } => {
            o.u8(3);
            o.u32(*body);
            o.u32s(vertices);
            o.vecs(forces);
        }
        Command::Grab {
            body,
            point,
            stiffness,
            damping,
        } => {
            o.u8(4);
            o.u32(*body);
            o.vec3(point);
            o.f64(*stiffness);
            o.f64(*damping);
        }
        Command::GrabPoint {
            body,
            vertices,
            weights,
            stiffness,
            damping,
        } => {
            o.u8(5);
            o.u32(*body);
            o.u32s(vertices);
            o.f64s(weights);
            o.f64(*stiffness);
            o.f64(*damping);
        }
        Command::MoveGrab { id, target } => {
            o.u8(6);
            o.u64(*id);
            o.vec3(target);
        }
        Command::Release { id } => {
            o.u8(7);
            o.u64(*id);
        }
        Command::Constrain(a) => {
            o.u8(8);
            o.u32(a.body);
            o.arr(&a.point);
            o.str(&a.kind);
            o.opt(&a.path, |o, p| {
                o.len(p.len());
                p.iter().for_each(|k| o.arr(k));
            });
            o.opt(&a.normal, |o, v| o.arr(v));
            o.opt(&a.origin, |o, v| o.arr(v));
            o.opt(&a.center, |o, v| o.arr(v));
            o.opt(&a.radius, |o, &r| o.f64(r));
            o.opt(&a.other, |o, &b| o.u32(b));
            o.opt(&a.other_point, |o, v| o.arr(v));
            o.opt(&a.release, |o, &t| o.f64(t));
        }
        Command::ReleaseConstraint { id } => {
            o.u8(9);
            o.u64(*id);
        }
        Command::RigidCore { body, vertices } => {
            o.u8(10);
            o.u32(*body);
            o.u32s(vertices);
        }
    }
}

fn read_command(i: &mut In<'_>) -> R<Command> {
    Ok(match i.u8()? {
        0 => Command::Steps {
            n: i.u64()?,
            failed: i.u8()? != 0,
        },
        1 => Command::Positions {
            body: i.u32()?,
            x: i.vecs()?,
        },
        2 => Command::Velocities {
            body: i.u32()?,
            v: i.vecs()?,
        },
        3 => Command::Forces {
            body: i.u32()?,
            vertices: i.u32s()?,
            forces: i.vecs()?,
        },
        4 => Command::Grab {
            body: i.u32()?,
            point: i.vec3()?,
            stiffness: i.f64()?,
            damping: i.f64()?,
        },
        5 => Command::GrabPoint {
            body: i.u32()?,
            vertices: i.u32s()?,
            weights: i.f64s()?,
            stiffness: i.f64()?,
            damping: i.f64()?,
        },
        6 => Command::MoveGrab {
            id: i.u64()?,
            target: i.vec3()?,
        },
        7 => Command::Release { id: i.u64()? },
        8 => Command::Constrain(ConstrainArgs {
            body: i.u32()?,
            point: i.arr()?,
            kind: i.str()?,
            path: i.opt(|i| {
                let n = i.len(32)?;
                (0..n).map(|_| i.arr()).collect()
            })?,
            normal: i.opt(In::arr)?,
            origin: i.opt(In::arr)?,
            center: i.opt(In::arr)?,
            radius: i.opt(In::f64)?,
            other: i.opt(In::u32)?,
            other_point: i.opt(In::arr)?,
            release: i.opt(In::f64)?,
        }),
        9 => Command::ReleaseConstraint { id: i.u64()? },
        10 => Command::RigidCore {
            body: i.u32()?,
            vertices: i.u32s()?,
        },
        t => return Err(format!("byte {}: {t} is not a command", i.at - 1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command and odd floats (−0, NaN payloads, subnormals) come back bit for bit,
    /// and cut or altered bytes are refused.
    #[test]
    fn round_trip_is_exact_and_bad_bytes_are_refused() {
        let odd = Vector3::new(-0.0, f64::from_bits(0x7ff8_0000_dead_beef), 5e-324);
        let log = Log(vec![
            Command::Steps { n: 7, failed: true },
            Command::Positions {
                body: 1,
                x: vec![odd],
            },
            Command::Velocities {
                body: 0,
                v: vec![odd, -odd],
            },
            Command::Forces {
                body: 0,
                vertices: vec![3, 4],
                forces: vec![odd, odd],
            },
            Command::Grab {
                body: 0,
                point: odd,
                stiffness: 1e3,
                damping: 0.1,
            },
            Command::GrabPoint {
                body: 0,
                vertices: vec![1, 2],
                weights: vec![0.25, 0.75],
                stiffness: 2.0,
                damping: 0.0,
            },
            Command::MoveGrab { id: 9, target: odd },
            Command::Release { id: 9 },
            Command::Constrain(ConstrainArgs {
                body: 0,
                point: [1.0, 2.0, 3.0],
                kind: "point".into(),
                path: Some(vec![[0.0, 1.0, 2.0, 3.0]]),
                normal: None,
                origin: Some([0.0; 3]),
                center: None,
                radius: Some(0.5),
                other: Some(1),
                other_point: None,
                release: Some(2.0),
            }),
            Command::ReleaseConstraint { id: 1 },
            Command::RigidCore {
                body: 1,
                vertices: vec![0, 5],
            },
        ]);
        let s = Saved {
            log,
            time: 0.1 + 0.2,
            steps: 30,
            bodies: vec![("a".into(), vec![odd], vec![-odd])],
        };
        let b = s.encode();
        let back = Saved::decode(&b).unwrap();
        assert_eq!(back.encode(), b);
        assert_eq!(back.time.to_bits(), s.time.to_bits());
        assert_eq!(back.bodies[0].1[0].y.to_bits(), odd.y.to_bits());
        assert!(Saved::decode(&b[..b.len() - 1])
            .unwrap_err()
            .contains("ends early"));
        let mut longer = b.clone();
        longer.push(0);
        assert!(Saved::decode(&longer).unwrap_err().contains("left over"));
        let mut other = b.clone();
        other[8] = 2;
        assert!(Saved::decode(&other).unwrap_err().contains("version 2"));
        assert!(Saved::decode(b"nonsense").is_err());
    }
}

//! Connections as hyper sees them. hyper answers some broken requests by
//! itself, before any of our code runs: a URL over 64 KiB (414), headers over
//! its buffer or too many of them (431), bytes that are not HTTP (400). Its
//! answers have empty bodies, outside the problem+json contract. hyper offers
//! no hook for them, so each connection's writes are watched for exactly
//! those heads (a 400, 414 or 431 status line with only `connection`,
//! `date` and `content-length: 0`, and nothing after them; every answer of
//! ours carries a content type) and they go out as problem+json instead.
//! Everything else passes through untouched.
//!
//! A client that speaks HTTP/2 with prior knowledge (its first bytes the
//! HTTP/2 preface) would get no answer at all from an HTTP/1.1 server; it
//! is told in its own protocol instead: an empty SETTINGS frame and a
//! GOAWAY with HTTP_1_1_REQUIRED (RFC 9113, 7), on which clients such as
//! curl try again over HTTP/1.1.
//!
//! Each connection's writes also have a deadline: a client that sends
//! requests and never reads the answers (its socket's window shut) would
//! hold its connection slot and the kernel's buffers for ever. A write that
//! makes no progress for `write_timeout_secs` (30 s) fails, and hyper
//! closes the connection.

use axum::serve::Listener;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// The first bytes of an HTTP/2 connection (RFC 9113, 3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A server's SETTINGS frame (empty), then GOAWAY: last stream 0, error
/// HTTP_1_1_REQUIRED (0xd).
const H2_GO_AWAY: &[u8] = &[
    0, 0, 0, 0x4, 0, 0, 0, 0, 0, // SETTINGS, no parameters
    0, 0, 8, 0x7, 0, 0, 0, 0, 0, // GOAWAY, 8 bytes, stream 0
    0, 0, 0, 0, // last stream id
    0, 0, 0, 0xd, // HTTP_1_1_REQUIRED
];

/// How long a write may wait on a client that does not read, unless
/// configured (`write_timeout_secs`): longer than any real client on a
/// slow link pauses, shorter than a siege can last.
pub const WRITE_WITHIN: Duration = Duration::from_secs(30);

/// A TCP listener whose connections answer hyper's own errors as problems
/// and give up on a client that reads nothing for `write_within`.
pub struct ProblemListener {
    pub listener: TcpListener,
    pub write_within: Duration,
}

impl Listener for ProblemListener {
    type Io = Conn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Conn, SocketAddr) {
        let (io, addr) = Listener::accept(&mut self.listener).await;
        (
            Conn {
                inner: io,
                replacement: None,
                stalled: None,
                write_within: self.write_within,
                first_read: true,
            },
            addr,
        )
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

pub struct Conn {
    inner: TcpStream,
    /// A problem answer being written in place of hyper's, and how far.
    replacement: Option<(Vec<u8>, usize)>,
    /// Since a write found the client not reading: when to give up.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    write_within: Duration,
    /// Nothing read yet: the HTTP/2 preface is looked for.
    first_read: bool,
}

impl Conn {
    pub fn stream(&self) -> &TcpStream {
        &self.inner
    }

    /// A write's outcome under the deadline: progress clears the clock; a
    /// write still waiting `WRITE_WITHIN` after the client stopped reading
    /// fails.
    fn deadline<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let within = self.write_within;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(within)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of the answer in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Writes what is left of a replacement answer.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, at)) = &mut self.replacement {
            if *at >= bytes.len() {
                self.replacement = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &bytes[*at..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *at += n;
        }
        Poll::Ready(Ok(()))
    }

    /// `drain` under the write deadline, when there is something to drain
    /// (nothing to drain is no progress: the clock keeps running).
    fn drain_within(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.replacement.is_none() {
            return Poll::Ready(Ok(()));
        }
        let drained = self.drain(cx);
        self.deadline(cx, drained)
    }

    /// Takes over a write that is one of hyper's own error answers.
    fn replaces(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<io::Result<usize>>> {
        let answer = problem_for(buf)?;
        self.replacement = Some((answer, 0));
        Some(match self.drain(cx) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            // The rest goes out on the next write, flush or shutdown.
            _ => Poll::Ready(Ok(buf.len())),
        })
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.first_read {
            return Pin::new(&mut self.inner).poll_read(cx, buf);
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let got = &buf.filled()[before..];
        if got.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let n = got.len().min(H2_PREFACE.len());
        if got[..n] != H2_PREFACE[..n] {
            self.first_read = false;
            return Poll::Ready(Ok(()));
        }
        if n < H2_PREFACE.len() {
            // Too little to tell yet (a preface in pieces): hyper gets it
            // as it comes, and answers the bad request line as before.
            self.first_read = false;
            return Poll::Ready(Ok(()));
        }
        // An HTTP/2 client: told so, and to hyper the connection ends
        // here (the frames go out on its shutdown, if not at once).
        buf.set_filled(before);
        self.first_read = false;
        self.replacement = Some((H2_GO_AWAY.to_vec(), 0));
        let _ = self.drain(cx);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain_within(cx))?;
        if let Some(done) = self.replaces(cx, buf) {
            return done;
        }
        let wrote = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.deadline(cx, wrote)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain_within(cx))?;
        let mut filled = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (filled.next(), filled.next())
            && let Some(done) = self.replaces(cx, only)
        {
            return done;
        }
        let wrote = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.deadline(cx, wrote)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain_within(cx))?;
        let flushed = Pin::new(&mut self.inner).poll_flush(cx);
        self.deadline(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The problem+json answer standing in for `buf`, if `buf` is one of
/// hyper's own bodiless error answers.
fn problem_for(buf: &[u8]) -> Option<Vec<u8>> {
    if buf.len() > 256 || !buf.starts_with(b"HTTP/1.") {
        return None;
    }
    let head = std::str::from_utf8(buf).ok()?.strip_suffix("\r\n\r\n")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let (status, kind, title, detail) = match status_line.get(9..13)? {
        "400 " => (
            400,
            "bad-request",
            "Bad request",
            "the request is not valid HTTP/1.1",
        ),
        "414 " => (
            414,
            "uri-too-long",
            "URI too long",
            "the URL is longer than this server accepts (64 KiB)",
        ),
        "431 " => (
            431,
            "request-header-fields-too-large",
            "Request header fields too large",
            "the request's headers are larger or more numerous than this server accepts",
        ),
        _ => return None,
    };
    let mut bodiless = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "connection" | "date" => {}
            "content-length" if value.trim() == "0" => bodiless = true,
            _ => return None,
        }
    }
    if !bodiless {
        return None;
    }
    let body = crate::error::problem_body(status, kind, title, detail);
    let mut out = format!(
        "{status_line}\r\ncontent-type: application/problem+json\r\nx-content-type-options: nosniff\r\n\
         cache-control: no-store\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend(body);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::problem_for;

    #[test]
    fn only_hypers_own_bodiless_error_heads_are_replaced() {
        let own = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 10:43:29 GMT\r\n\r\n";
        let out = String::from_utf8(problem_for(own).unwrap_or_default()).unwrap_or_default();
        assert!(
            out.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
            "{out}"
        );
        assert!(out.contains("content-type: application/problem+json\r\n"));
        assert!(out.ends_with("\"status\":431,\"detail\":\"the request's headers are larger or more numerous than this server accepts\"}"), "{out}");
        // Ours carry a content type; bodies and other statuses pass untouched.
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\ncontent-length: 0\r\n\r\n";
        assert!(problem_for(ours).is_none());
        assert!(problem_for(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(
            problem_for(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\nbody").is_none()
        );
        assert!(problem_for(b"{\"HTTP/1.1 414 \": 1}").is_none());
    }
}

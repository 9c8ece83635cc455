//! Connections as hyper sees them. hyper answers some broken requests by
//! itself, before any of our code runs: a URL over 64 KiB (414), headers over
//! its buffer or too many of them (431), bytes that are not HTTP (400). Its
//! answers have empty bodies, outside the problem+json contract. hyper offers
//! no hook for them, so each connection's writes are watched for exactly
//! those heads (a 400, 414 or 431 status line with only `connection`,
//! `date` and `content-length: 0`, and nothing after them; every answer of
//! ours carries a content type) and they go out as problem+json instead.
//! Everything else passes through untouched.

use axum::serve::Listener;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// A TCP listener whose connections answer hyper's own errors as problems.
pub struct ProblemListener(pub TcpListener);

impl Listener for ProblemListener {
    type Io = Conn;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Conn, SocketAddr) {
        let (io, addr) = Listener::accept(&mut self.0).await;
        (
            Conn {
                inner: io,
                replacement: None,
            },
            addr,
        )
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

pub struct Conn {
    inner: TcpStream,
    /// A problem answer being written in place of hyper's, and how far.
    replacement: Option<(Vec<u8>, usize)>,
}

impl Conn {
    pub fn stream(&self) -> &TcpStream {
        &self.inner
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
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(done) = self.replaces(cx, buf) {
            return done;
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        let mut filled = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (filled.next(), filled.next())
            && let Some(done) = self.replaces(cx, only)
        {
            return done;
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
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

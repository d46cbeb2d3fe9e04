package arenabot;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.UUID;

/**
 * The way to a referee at a {@code unix:PATH} address (a bot in the sandbox has no network: only the
 * referee's Unix socket). Netty reaches Unix sockets only through its native epoll library, which
 * Debian's libnetty-java does not ship; Java itself has them since Java 16. So gRPC dials an address of
 * Netty's in-process transport, and each connection there is piped, byte for byte, to a connection to
 * the socket made with Java's own {@link SocketChannel}. The HTTP/2 and gRPC on it are Netty's and
 * gRPC's as over TCP.
 */
final class UnixBridge {
    private final Path socket;
    private final LocalAddress address;
    private final Channel server;
    private volatile IOException failure;

    UnixBridge(Path socket, EventLoopGroup group) throws InterruptedException {
        this.socket = socket;
        this.address = new LocalAddress("arena-referee-" + UUID.randomUUID());
        this.server = new ServerBootstrap()
                .group(group)
                .channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override
                    protected void initChannel(LocalChannel channel) {
                        channel.pipeline().addLast(new Pipe());
                    }
                })
                .bind(address)
                .sync()
                .channel();
    }

    /** The in-process address for gRPC to dial. */
    LocalAddress address() {
        return address;
    }

    /** Why the last connection to the socket failed, or null. */
    IOException failure() {
        return failure;
    }

    void close() {
        server.close();
    }

    /** One gRPC connection: bytes from gRPC go to the socket, bytes from the socket go to gRPC. */
    private final class Pipe extends ChannelInboundHandlerAdapter {
        private SocketChannel unix;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            try {
                unix = SocketChannel.open(StandardProtocolFamily.UNIX);
                unix.connect(UnixDomainSocketAddress.of(socket));
            } catch (IOException | UnsupportedOperationException e) {
                failure = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
                closeQuietly();
                ctx.close();
                return;
            }
            Thread reader = new Thread(() -> read(ctx), "arena-unix-reader");
            reader.setDaemon(true);
            reader.start();
            ctx.fireChannelActive();
        }

        private void read(ChannelHandlerContext ctx) {
            ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
            try {
                while (true) {
                    buffer.clear();
                    int n = unix.read(buffer);
                    if (n < 0) {
                        break;
                    }
                    buffer.flip();
                    ctx.writeAndFlush(Unpooled.copiedBuffer(buffer)).sync();
                }
            } catch (IOException | InterruptedException e) {
                // the socket or the gRPC side closed: close both
            } catch (RuntimeException e) {
                // writeAndFlush failed because gRPC's side is gone
            }
            closeQuietly();
            ctx.close();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) throws IOException {
            ByteBuf bytes = (ByteBuf) message;
            try {
                ByteBuffer buffer = bytes.nioBuffer();
                while (buffer.hasRemaining()) {
                    unix.write(buffer);
                }
            } finally {
                bytes.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closeQuietly();
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            closeQuietly();
            ctx.close();
        }

        private void closeQuietly() {
            SocketChannel channel = unix;
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException e) {
                    // already closed
                }
            }
        }
    }
}

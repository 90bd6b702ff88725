// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Java 17 java.net.http.HttpClient: a GET and a POST of "OK <workload> <mode>" to the sink
// ($COMPAT_SINK), through the client's selector thread (Java NIO: epoll and an eventfd/pipe),
// plus System.getProperty("user.name") / "user.home" from the passwd entry. Exit 0 reported,
// 3 refused with EPERM/EACCES, 1 anything else.
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

public class JavaHttp {
    static final String ID = System.getenv().getOrDefault("COMPAT_ID", "? ?");

    static void fail(String msg) {
        System.err.println("compat " + ID + ": FAIL " + msg);
        System.exit(1);
    }

    static void refused(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            String m = String.valueOf(c.getMessage());
            if (m.contains("Operation not permitted") || m.contains("Permission denied")) {
                System.out.println("compat " + ID + ": denied: " + c);
                System.exit(3);
            }
        }
        e.printStackTrace();
        fail("report: " + e);
    }

    public static void main(String[] a) throws Exception {
        String user = System.getProperty("user.name");
        if (user == null || user.isEmpty() || user.equals("?"))
            fail("user.name is '" + user + "'");
        HttpClient c = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(20)).build();
        URI sink = URI.create(System.getenv("COMPAT_SINK"));
        try {
            HttpResponse<String> g = c.send(HttpRequest.newBuilder(sink).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (!g.body().equals("pong\n"))
                fail("GET: " + g.body());
            HttpResponse<String> p = c.send(HttpRequest.newBuilder(sink).POST(HttpRequest.BodyPublishers.ofString("OK " + ID + " " + user)).build(),
                                            HttpResponse.BodyHandlers.ofString());
            if (p.statusCode() != 200)
                fail("POST: " + p.statusCode());
        } catch (IOException e) {
            refused(e);
        }
        System.out.println("compat " + ID + ": reported");
    }
}
